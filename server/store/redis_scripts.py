"""The Redis store's Lua scripts, and the one way they are called: by SHA, loaded again when
a restarted or promoted Redis answers NOSCRIPT (its script cache starts empty)."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Coroutine, Sequence
from typing import Any

from redis.exceptions import NoScriptError

from server.store.redis_topology import UNREACHABLE, Answer, Command, RedisTopology, Wait

# KEYS[1]: the stream key; KEYS[2]: the wake-up channel of its group (same slot).
# ARGV[1]: the expected version; ARGV[2]: "<origin> <stream name>", for the wake-up (origin
# names the store object that appends, which skips its own wake-ups); ARGV[3]: how many of the
# channel's subscribers are the appender's own (confirmed by Redis); ARGV[4..]: one envelope
# per event. The wake-up is msgpack [version, "<origin> <stream>", [envelope, ...]]: a
# subscriber whose fold is just before these events folds them without reading the stream.
# It is published only when someone besides the appender listens: a room followed by its
# writer alone (every room of a single server, and each room's home under --workers) costs
# neither Redis nor the writer a message that the writer would read back only to drop it.
# Returns {1, new version}, {0, current version}, or {2, new version} when the events after
# the expected version are exactly these (a retried append that had landed). The current
# version is the id of the last entry, "<version>-0"; each event is added with the explicit
# id of its version, so the ids themselves forbid a gap or a duplicate even if this check were
# bypassed.
APPEND_SCRIPT = """
local last = redis.call('XREVRANGE', KEYS[1], '+', '-', 'COUNT', 1)
local current = 0
if #last > 0 then
  local ms, seq = string.match(last[1][1], '^(%d+)-(%d+)$')
  if seq ~= '0' then
    return redis.error_reply('CORRUPT ' .. last[1][1])
  end
  current = tonumber(ms)
end
local expected = tonumber(ARGV[1])
local count = #ARGV - 3
if current ~= expected then
  if current >= expected + count then
    -- A retry of an append whose reply was lost finds its own events: report success (2).
    local rows = redis.call('XRANGE', KEYS[1], (expected + 1) .. '-0', (expected + count) .. '-0')
    local same = #rows == count
    for i = 1, #rows do
      local fields = rows[i][2]
      if #fields ~= 2 or fields[1] ~= 'd' or fields[2] ~= ARGV[i + 3] then
        same = false
        break
      end
    end
    if same then
      return {2, expected + count}
    end
  end
  return {0, current}
end
for i = 4, #ARGV do
  redis.call('XADD', KEYS[1], string.format('%d-0', current + i - 3), 'd', ARGV[i])
end
local version = current + count
local listeners = redis.call('PUBSUB', 'SHARDNUMSUB', KEYS[2])[2]
if listeners > tonumber(ARGV[3]) then
  local payloads = {}
  for i = 4, #ARGV do
    payloads[i - 3] = ARGV[i]
  end
  redis.call('SPUBLISH', KEYS[2], cmsgpack.pack({version, ARGV[2], payloads}))
end
return {1, version}
"""

# KEYS[1], KEYS[2]: an index shard's sorted set and hash (one hash tag, one slot). ARGV[1]:
# "put" or "remove"; ARGV[2]: the member; ARGV[3], ARGV[4]: its score and value (put). Both
# keys change together, as MULTI did, but as one command that a pipeline can batch.
INDEX_SCRIPT = """
if ARGV[1] == 'put' then
  redis.call('ZADD', KEYS[1], ARGV[3], ARGV[2])
  redis.call('HSET', KEYS[2], ARGV[2], ARGV[4])
else
  redis.call('ZREM', KEYS[1], ARGV[2])
  redis.call('HDEL', KEYS[2], ARGV[2])
end
return 1
"""

# KEYS as INDEX; ARGV: member, score, value, expired_at. Puts the member unless it is there
# with a score above expired_at (a lease still running): 1 if put.
INDEX_CLAIM_SCRIPT = """
local held = redis.call('ZSCORE', KEYS[1], ARGV[1])
if held and tonumber(held) > tonumber(ARGV[4]) then
  return 0
end
redis.call('ZADD', KEYS[1], ARGV[2], ARGV[1])
redis.call('HSET', KEYS[2], ARGV[1], ARGV[3])
return 1
"""

# KEYS: streams (on a Cluster, of one hash tag). Each one's last entry id, "" if it has none.
# One command per batch: the periodic catch-up's XREVRANGE per stream was ~1,250 commands
# every 2 s at 250 rooms, 25-37 ms of redis-py's packing and parsing in a few long loop turns.
LAST_IDS_SCRIPT = """
local out = {}
for i = 1, #KEYS do
  local last = redis.call('XREVRANGE', KEYS[i], '+', '-', 'COUNT', 1)
  out[i] = last[1] and last[1][1] or ''
end
return out
"""

# KEYS: streams of one hash tag (one slot on a Cluster); ARGV[i]: the version KEYS[i] must be
# at (0: absent). Deletes them all if every one is there, else none: 1 if deleted. One script,
# so no append lands between the check and the delete: the archiver's fence.
DELETE_AT_SCRIPT = """
for i = 1, #KEYS do
  local last = redis.call('XREVRANGE', KEYS[i], '+', '-', 'COUNT', 1)
  local current = 0
  if #last > 0 then
    local version = string.match(last[1][1], '^(%d+)-0$')
    current = version and tonumber(version) or -1
  end
  if current ~= tonumber(ARGV[i]) then
    return 0
  end
end
redis.call('DEL', unpack(KEYS))
return 1
"""

# KEYS[1], KEYS[2]: a queue's sorted set and hash (one hash tag, one slot). ARGV: member,
# score, value. Adds the member unless it is there already: 1 if added, 0 if not.
QUEUE_JOIN_SCRIPT = """
if redis.call('ZSCORE', KEYS[1], ARGV[1]) then
  return 0
end
redis.call('ZADD', KEYS[1], ARGV[2], ARGV[1])
redis.call('HSET', KEYS[2], ARGV[1], ARGV[3])
return 1
"""

# KEYS as QUEUE_JOIN; ARGV: the members of a group. Removes them all if every one is there,
# else none: 1 if taken. One script on one slot, so no other take or leave interleaves: a
# member is taken once, and never after leaving.
QUEUE_TAKE_SCRIPT = """
for i = 1, #ARGV do
  if not redis.call('ZSCORE', KEYS[1], ARGV[i]) then
    return 0
  end
end
redis.call('ZREM', KEYS[1], unpack(ARGV))
redis.call('HDEL', KEYS[2], unpack(ARGV))
return 1
"""


class Script:
    """A Lua script and its SHA-1, the name Redis knows it by once loaded."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.sha = hashlib.sha1(source.encode()).hexdigest()

    def call(self, keys: Sequence[str], args: Sequence[Any] = ()) -> Command:
        return ("EVALSHA", self.sha, len(keys), *keys, *args)

    def head(self, keys: Sequence[str]) -> Command:
        """A call's command up to its arguments, for a caller that keeps it per key set."""
        return ("EVALSHA", self.sha, len(keys), *keys)


APPEND = Script(APPEND_SCRIPT)
INDEX = Script(INDEX_SCRIPT)
INDEX_CLAIM = Script(INDEX_CLAIM_SCRIPT)
LAST_IDS = Script(LAST_IDS_SCRIPT)
DELETE_AT = Script(DELETE_AT_SCRIPT)
QUEUE_JOIN = Script(QUEUE_JOIN_SCRIPT)
QUEUE_TAKE = Script(QUEUE_TAKE_SCRIPT)


async def with_scripts(
    topology: RedisTopology, commands: Sequence[Command], *, wait: Wait | None = None
) -> list[Answer]:
    """Script calls sent through ``topology``, and those a Redis without the script cache
    refused (NOSCRIPT) sent again once their scripts are loaded (on every primary)."""
    answers = await topology.send(commands, wait=wait)
    missing = _refused(answers)
    if not missing:
        return answers
    return await _loaded_again(topology, commands, answers, missing, wait)


Told = Callable[[list[Answer] | BaseException | Coroutine[Any, Any, list[Answer]]], None]
"""Told the answers, the batch's failure, or the coroutine that works the answers out (its
caller runs it)."""


def with_scripts_now(topology: RedisTopology, commands: Sequence[Command], told: Told) -> bool:
    """``with_scripts`` written at once where the topology can (``send_now``): ``told`` hears
    from the connection's own callback, a loop turn sooner than a task awaiting the reply.
    What needs more round trips (a NOSCRIPT's reload, the retry of a broken line, as ``send``
    retries) it is told as a coroutine. False: nothing was written (``with_scripts``, then)."""

    def replied(outcome: list[Any] | BaseException) -> None:
        if isinstance(outcome, UNREACHABLE):
            told(with_scripts(topology, commands))
        elif isinstance(outcome, BaseException):
            told(outcome)
        else:
            answers: list[Answer] = [(reply, None) for reply in outcome]
            missing = _refused(answers)
            told(_loaded_again(topology, commands, answers, missing, None) if missing else answers)

    return topology.send_now(commands, replied)


def _refused(answers: Sequence[Answer]) -> list[int]:
    return [i for i, (reply, _) in enumerate(answers) if isinstance(reply, NoScriptError)]


async def _loaded_again(
    topology: RedisTopology,
    commands: Sequence[Command],
    answers: list[Answer],
    missing: list[int],
    wait: Wait | None,
) -> list[Answer]:
    """The refused commands sent again once their scripts are loaded: the one place scripts
    are reloaded."""
    for sha in dict.fromkeys(commands[i][1] for i in missing):
        await topology.client.script_load(_BY_SHA[sha])
    again = await topology.send([commands[i] for i in missing], wait=wait)
    for i, answer in zip(missing, again, strict=True):
        answers[i] = answer
    return answers


_BY_SHA = {
    script.sha: script.source
    for script in (APPEND, INDEX, INDEX_CLAIM, LAST_IDS, DELETE_AT, QUEUE_JOIN, QUEUE_TAKE)
}
