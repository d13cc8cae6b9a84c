// The web viewer: a spectator client of the documented protocol (docs/protocol.md) over one
// WebSocket, msgpack frames through the vendored @msgpack/msgpack. It sees what any spectator
// sees (fair spectating and the room's delay are the server's), and draws it. The pages to play
// (play.js) and the ways in (home.js) build on its connection and its race panel.
"use strict";

(() => {
  const { h } = window.Board;
  const main = document.getElementById("main");
  const linkState = document.getElementById("link");
  linkState.textContent = "connecting…"; // said by the script: a page without one never connects
  const STATUS_TEXT = {
    waiting: "waiting", playing: "playing", won: "won", over: "no move left",
    resigned: "resigned", timed_out: "ran out of time", left: "left",
  };

  // ---- the connection ------------------------------------------------------------------
  // The WebSocket URL; naming the room a page is for is a routing hint (docs/protocol.md,
  // "Transport"): a server with --workers serves the connection where the room is.
  function socketUrl(room) {
    const scheme = location.protocol === "https:" ? "wss://" : "ws://";
    return `${scheme}${location.host}/` + (room ? `?room=${encodeURIComponent(room)}` : "");
  }

  // Close codes after which reconnecting cannot help (docs/protocol.md, "Limits and close codes").
  const FINAL_CLOSE = {
    4000: "this page speaks a protocol version the server does not",
    4001: "your seat was taken back on another tab or device: this page has let it go",
  };

  // A moderator's rename, told once by the server in the first `welcome` (or `account`) after
  // it, on whichever page connects first: shown above the page until dismissed, and the name
  // this browser keeps for its account is the new one from then on.
  function showNotice(msg) {
    const Keep = window.Play && window.Play.Keep;
    const name = msg.type === "account" ? msg.name : msg.account;
    if (Keep && name && Keep.key()) Keep.setAccount(name, Keep.key());
    const shown = document.getElementById("notice");
    if (shown && shown.dataset.text === msg.notice) return;
    const close = h("button", { type: "button", class: "dismiss" }, "OK");
    const banner = h("p", { id: "notice", role: "alert", class: "notice", "data-text": msg.notice },
      `${msg.notice} `, close);
    close.addEventListener("click", () => banner.remove());
    if (shown) shown.replaceWith(banner);
    else main.before(banner);
  }

  class Arena {
    // `hello` gives the fields a hello carries besides the protocol (name, key, resume), read
    // afresh at every connection; a seat's token and an account's key are never in a URL.
    constructor(onMessage, room = null, hello = null) {
      this.onMessage = onMessage;
      this.room = room;
      this.hello = hello;
      this.closed = null;
      this.ws = null;
      this.offset = 0; // server clock minus ours, from pong
      this.pinged = 0;
      this.retry = 500;
      this.open();
      setInterval(() => this.ping(), 10000);
    }

    open() {
      const ws = new WebSocket(socketUrl(this.room));
      ws.binaryType = "arraybuffer";
      this.ws = ws;
      ws.onopen = () => {
        this.retry = 500;
        linkState.textContent = "connected";
        this.send({ type: "hello", protocol: 1, name: "web viewer", ...(this.hello ? this.hello() : {}) });
        this.ping();
      };
      ws.onmessage = (e) => {
        if (!(e.data instanceof ArrayBuffer)) return;
        const msg = window.MessagePack.decode(new Uint8Array(e.data));
        const messages = msg.type === "batch" ? msg.messages : [msg];
        for (const one of messages) {
          if (one.type === "pong") this.offset = one.at - (this.pinged + Date.now()) / 2;
          if (one.type === "welcome") this.limits = one.limits || {};
          if ((one.type === "welcome" || one.type === "account") && one.notice) showNotice(one);
          this.onMessage(one);
        }
      };
      ws.onclose = (e) => {
        if (this.ws !== ws) return;
        if (FINAL_CLOSE[e.code]) {
          this.closed = FINAL_CLOSE[e.code];
          linkState.textContent = `disconnected: ${this.closed}`;
          this.onMessage({ type: "closed", code: e.code, reason: this.closed });
          return;
        }
        linkState.textContent = `disconnected (${e.code}); reconnecting…`;
        // Full jitter: a page among thousands reconnecting at once (a deploy, a busy server
        // answering 503) comes back at a time of its own.
        setTimeout(() => this.open(), this.retry * (0.5 + Math.random()));
        this.retry = Math.min(this.retry * 2, 10000);
      };
    }

    send(msg) {
      if (this.ws && this.ws.readyState === WebSocket.OPEN) {
        this.ws.send(window.MessagePack.encode(msg));
        return true;
      }
      return false;
    }

    // Drop the connection as a lost network would (the page reconnects and resumes).
    drop() {
      if (this.ws) this.ws.close(4100, "dropped");
    }

    // Connect again at once with the hello of now: a login or logout on this page changed the key.
    renew() {
      const old = this.ws;
      this.open(); // the old socket's close is then no loss to report
      if (old) old.close(1000, "renewed");
    }

    ping() {
      this.pinged = Date.now();
      this.send({ type: "ping" });
    }

    now() {
      return Date.now() + this.offset;
    }
  }

  // ---- formatting ----------------------------------------------------------------------
  function clock(ms) {
    const s = Math.max(0, Math.ceil(ms / 1000));
    return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, "0")}`;
  }

  function ago(ms) {
    const s = Math.max(0, Math.round(ms / 1000));
    return s < 60 ? `${s} s` : `${Math.round(s / 60)} min`;
  }

  // The documented ranking: winners by finish time, then foundation (more first), then who
  // reached it first, then join order.
  function ranking(players) {
    const order = players.map((p, i) => [p, i]);
    order.sort(([a, i], [b, j]) => {
      const aw = a.status === "won", bw = b.status === "won";
      if (aw !== bw) return aw ? -1 : 1;
      if (aw) return a.finished_at - b.finished_at || i - j;
      return b.foundation - a.foundation || (a.reached_at ?? 0) - (b.reached_at ?? 0) || i - j;
    });
    return order.map(([p], k) => ({ ...p, place: k + 1 }));
  }

  // What the page says for a refusal it cannot do anything about: a limit reached, plainly.
  function errorText(msg, code, limits = {}) {
    switch (msg.code) {
      case "no_such_room": return `There is no room ${code}.`;
      case "too_many_spectators": {
        const n = limits.max_spectators_per_room;
        return `Room ${code} has as many spectators as this server takes${n ? ` (${n})` : ""}: `
          + "try again in a moment.";
      }
      case "too_many_rooms": return "The server has as many rooms open as it takes: try again in a moment.";
      case "too_many_lobbies": return "You have as many open lobbies as one player may: start or leave one first.";
      default: return `${msg.code}: ${msg.reason}`;
    }
  }

  // The verdict on a finished race, in the words of `solitaire verify`.
  function verdictSection(v) {
    const state = { fair: "fair", "not fair": "not-fair", "cannot be checked": "unchecked" }[v.outcome];
    return h("section", { class: "verify", "aria-label": "verify" },
      h("h2", {}, "Verify"),
      h("p", { class: "verdict", "data-verdict": state }, v.outcome + (v.reason ? `: ${v.reason}` : "")),
      h("ul", { class: "checks" }, v.passed.map((line) => h("li", {}, `checked: ${line}`))));
  }

  // ---- one room: the race panel and every racer's board ----------------------------------
  class RoomView {
    // `me`: the player id of a racer's own page, whose board is drawn by the page itself.
    constructor(arena, code, root, me = null) {
      this.arena = arena;
      this.code = code.toLowerCase();
      this.me = me;
      this.root = root;
      this.room = null;
      this.games = new Map(); // player -> {version, events, view}
      this.finished = null;
      this.verified = null;
      this.daily = null;
      this.dailyAsked = false;
      this.error = null;
      this.dirty = false;
      this.panel = h("section", { class: "panel", "aria-label": "race" });
      this.boards = h("div", { class: "boards" });
      root.replaceChildren(this.panel, this.boards);
      this.timer = setInterval(() => this.tick(), 250);
    }

    close() {
      clearInterval(this.timer);
    }

    join() {
      this.games.clear();
      this.finished = null;
      this.verified = null;
      this.dailyAsked = false;
      this.arena.send({ type: "join", room: this.code, role: "spectator" });
    }

    handle(msg) {
      switch (msg.type) {
        case "room":
          this.room = msg.room;
          break;
        case "game":
          this.games.set(msg.player, {
            version: msg.version, events: msg.events.slice(),
            view: msg.events.length ? window.Board.fold(msg.events) : null,
          });
          break;
        case "game_event": {
          const game = this.games.get(msg.player) || { version: 0, events: [], view: null };
          if (msg.version === game.version + 1) {
            game.events.push(msg.event);
            game.view = window.Board.step(game.view, msg.event);
            game.version = msg.version;
            this.games.set(msg.player, game);
          } else if (msg.version > game.version + 1) {
            this.arena.send({ type: "watch", room: this.code, player: msg.player });
          }
          break;
        }
        case "progress":
          if (this.room) {
            const p = this.room.players.find((q) => q.player === msg.player);
            if (p) Object.assign(p, {
              status: msg.status, foundation: msg.foundation, moves: msg.moves,
              finished_at: msg.finished_at, reached_at: msg.reached_at,
            });
          }
          break;
        case "countdown":
          if (this.room) Object.assign(this.room, { status: "countdown", go_at: msg.go_at });
          break;
        case "berserked": { // a tournament racer halved their own clock
          const p = this.room && this.room.players.find((q) => q.player === msg.player);
          if (p) p.berserk = true;
          break;
        }
        case "started":
          if (this.room) {
            Object.assign(this.room, { status: "racing", started_at: msg.at, ends_at: msg.ends_at });
          }
          break;
        case "daily_standings":
          if (msg.revealed && this.room && msg.commitment === this.room.commitment) {
            this.daily = { seed: msg.seed, salt: msg.salt };
          }
          break;
        case "finished":
          this.finished = msg;
          if (this.room) Object.assign(this.room, { status: "finished", finished_at: msg.at });
          break;
        case "error":
          if (msg.code !== "rate_limited") {
            this.error = errorText(msg, this.code, this.arena.limits || {});
          }
          break;
        default:
          return;
      }
      this.dirty = true;
      requestAnimationFrame(() => this.draw());
    }

    tick() {
      const left = this.panel.querySelector(".time-left");
      if (left && this.room) left.textContent = this.timeLeft();
      this.panel.querySelectorAll("[data-away-since]").forEach((el) => {
        el.textContent = `away ${ago(this.arena.now() - Number(el.dataset.awaySince))}`;
      });
    }

    timeLeft() {
      const r = this.room;
      if (r.status === "countdown" && r.go_at) return `starts in ${clock(r.go_at - this.arena.now())}`;
      if (r.status !== "racing") return r.status;
      // A racer's own page: a berserk racer's clock runs out at half the race.
      const mine = this.me && r.players.find((p) => p.player === this.me);
      const ends = mine && mine.berserk && r.started_at ? (r.started_at + r.ends_at) / 2 : r.ends_at;
      return ends ? `${clock(ends - this.arena.now())} left` : "no time limit";
    }

    draw() {
      if (!this.dirty) return;
      this.dirty = false;
      if (this.error && !this.room) {
        this.panel.replaceChildren(h("p", { class: "error", role: "alert" }, this.error));
        return;
      }
      if (!this.room) return;
      this.panel.replaceChildren(...this.panelParts());
      this.drawBoards();
    }

    panelParts() {
      const r = this.room;
      const head = h("h1", {}, `Room ${r.id} `,
        h("span", { class: "variant" }, r.variant === "swiss" ? "Swiss" : "Quadrennial"));
      const facts = h("p", { class: "facts" },
        h("span", { class: "room-status", "data-status": r.status }, r.status),
        r.status === "racing" || r.status === "countdown" ? " · " : "",
        r.status === "racing" || r.status === "countdown"
          ? [h("span", { class: "time-left" }, this.timeLeft()), " · "] : " · ",
        `${r.spectators} watching`,
        r.spectator_delay_ms ? ` · ${r.spectator_delay_ms / 1000} s delay` : "",
        r.open_seed ? " · open seed" : " · secret seed",
        r.winnable ? " · winnable deal" : "");
      // A room joined after its end sends no `finished`: its players' progress is final.
      const over = this.finished !== null || r.status === "finished";
      const rows = this.finished ? this.finished.ranking : ranking(r.players);
      const table = h("table", { class: "ranking" },
        h("caption", {}, over ? "Results" : "Ranking"),
        h("thead", {}, h("tr", {}, ["#", "racer", "status", "foundation", "moves", "connection"]
          .map((t) => h("th", { scope: "col", class: t }, t)))),
        h("tbody", {}, rows.map((p) => this.rankRow(p))));
      const parts = [head, facts, table];
      if (this.finished) {
        const f = this.finished;
        parts.push(h("p", { class: "result" },
          `Finished (${f.reason === "time_limit" ? "time limit" : "every game done"}). `,
          f.seed !== null ? `Seed ${f.seed}, ` : "", `commitment ${f.commitment.slice(0, 12)}…`));
        const verdict = this.verdict();
        if (verdict) parts.push(verdictSection(verdict));
        const report = this.reportSection(f);
        if (report) parts.push(report);
      }
      if (r.rematch) {
        // Its racers asked to race again: the new room is a click away.
        parts.push(h("p", { class: "rematch" }, "The racers are racing again: ",
          h("a", { href: `/watch/${r.rematch}` }, `watch the rematch in room ${r.rematch}`), "."));
      }
      return parts;
    }

    // A Report button for each person who raced (not a bot, not this browser's own account),
    // made once: the panel is drawn again as events come, and a form being filled stays.
    reportSection(f) {
      if (!window.Mod || !window.Play || !window.Play.Keep.key()) return null;
      if (!this.reports) {
        const own = (window.Play.Keep.account() || "").toLowerCase();
        const racers = f.ranking.filter((p) => !p.bot && p.name.toLowerCase() !== own);
        if (!racers.length) return null;
        this.reports = h("section", { class: "reports", "aria-label": "report a racer" },
          h("p", { class: "small" }, "Something wrong? Tell the moderators:"),
          ...racers.map((p) => h("p", {}, window.Mod.reportButton(p.name, this.room.id))));
      }
      return this.reports;
    }

    // The race checked here, from what the server published (window.Verify), once every
    // racer's game is in: computed once per set of events shown.
    verdict() {
      const f = this.finished;
      const ranked = f.ranking.map((p) => p.player);
      if (!ranked.every((player) => this.games.has(player))) return null;
      // A daily challenge attempt reveals no seed: the day's standings do, once it is over.
      if (f.seed === null && this.room.started_at && !this.dailyAsked) {
        this.dailyAsked = true;
        const day = new Date(this.room.started_at).toISOString().slice(0, 10);
        this.arena.send({ type: "daily_results", variant: this.room.variant, date: day, ref: "verify" });
      }
      const reveal = f.seed === null && this.daily ? this.daily : f;
      const key = ranked.map((player) => this.games.get(player).version).join(",") + reveal.seed;
      if (this.verified && this.verified.key === key) return this.verified.verdict;
      const games = f.ranking.map((p) => [p.name, this.games.get(p.player).events]);
      const verdict = window.Verify.verifyRace({
        variant: this.room.variant, commitment: this.room.commitment, seed: reveal.seed, salt: reveal.salt, games,
      });
      this.verified = { key, verdict };
      return verdict;
    }

    rankRow(p) {
      const live = this.room.players.find((q) => q.player === p.player);
      let link = "–";
      let linkAttrs = { class: "connection" };
      if (live && !live.connected && live.away_since) {
        link = `away ${ago(this.arena.now() - live.away_since)}`;
        linkAttrs = { "data-away-since": live.away_since, class: "connection away" };
      } else if (live) {
        link = "connected";
      }
      const name = this.finished || this.room.status === "finished"
        ? h("a", { href: `/replay/${this.room.id}/${encodeURIComponent(p.player)}` }, p.name)
        : p.name;
      const you = p.player === this.me ? h("span", { class: "you" }, " (you)") : null;
      const bot = (live && live.bot) || p.bot;
      return h("tr", { "data-player": p.player, "data-place": p.place, "data-bot": bot || null,
        class: you ? "me" : bot ? "bot" : null },
        h("td", { class: "place" }, p.place), h("td", { class: "name" }, name, you),
        h("td", { class: "status" }, STATUS_TEXT[p.status] || p.status),
        h("td", { class: "foundation" }, `${p.foundation}/52`),
        h("td", { class: "moves" }, p.moves), h("td", linkAttrs, link));
    }

    drawBoards() {
      const seen = new Set();
      for (const p of this.room.players) {
        const game = this.games.get(p.player);
        if (!game || !game.view || p.player === this.me) continue;
        seen.add(p.player);
        let section = this.boards.querySelector(`section[data-player="${CSS.escape(p.player)}"]`);
        if (!section) section = h("section", { class: "board", "data-player": p.player });
        this.boards.append(section); // (again): the boards stay in join order
        const key = `${game.version} ${p.status} ${p.moves}`;
        if (section.dataset.key === key) continue;
        section.dataset.key = key;
        section.setAttribute("aria-label", `${p.name}'s board`);
        section.replaceChildren(
          h("h2", {}, h("span", { class: "name" }, p.name), " ",
            h("span", { class: "status" }, game.view.abandoned ? "abandoned" : STATUS_TEXT[p.status] || p.status),
            " ", h("span", { class: "small" }, `${game.view.moves} moves`),
            game.view.moves < p.moves
              ? h("span", { class: "small held" },
                ` · shown to move ${game.view.moves} of ${p.moves} (fair spectating)`)
              : null),
          window.Board.render(game.view));
      }
      for (const section of [...this.boards.children]) {
        if (!seen.has(section.dataset.player)) section.remove();
      }
    }
  }

  // ---- pages ------------------------------------------------------------------------------
  // The racers' progress of one live room for the rooms page: a spectator connection of its
  // own, so the room's spectator delay applies as to any spectator (and it counts as one).
  class Peek {
    constructor(code, onChange) {
      this.code = code;
      this.players = [];
      this.onChange = onChange;
      this.closed = false;
      this.ws = new WebSocket(socketUrl(code));
      this.ws.binaryType = "arraybuffer";
      this.ws.onopen = () => this.send({ type: "hello", protocol: 1, name: "web viewer" });
      this.ws.onmessage = (e) => {
        if (!(e.data instanceof ArrayBuffer)) return;
        const msg = window.MessagePack.decode(new Uint8Array(e.data));
        for (const one of msg.type === "batch" ? msg.messages : [msg]) this.handle(one);
      };
    }

    send(msg) {
      if (this.ws.readyState === WebSocket.OPEN) this.ws.send(window.MessagePack.encode(msg));
    }

    handle(msg) {
      if (msg.type === "welcome") this.send({ type: "join", room: this.code, role: "spectator" });
      else if (msg.type === "room") this.players = msg.room.players;
      else if (msg.type === "progress") {
        const p = this.players.find((q) => q.player === msg.player);
        if (p) Object.assign(p, { status: msg.status, foundation: msg.foundation, moves: msg.moves });
      } else return;
      this.onChange(this);
    }

    // One span a racer, e.g. "ann 12/52 (40 moves)", ", resigned" once done; comma-separated.
    parts() {
      return this.players.flatMap((p, i) => {
        const done = p.status === "playing" || p.status === "waiting"
          ? "" : `, ${STATUS_TEXT[p.status] || p.status}`;
        const racer = h("span", { class: "racer" }, `${p.name} ${p.foundation}/52 (${p.moves} moves${done})`);
        return i ? [", ", racer] : [racer];
      });
    }

    close() {
      this.closed = true;
      this.ws.close();
    }
  }

  function indexPage() {
    const live = h("tbody");
    const recent = h("tbody");
    const cols = ["room", "variant", "status", "racers", "progress", "players", "watching", "rated",
      "seed", "created"];
    // At most this many racing rooms have their progress shown (one spectator connection each).
    const PEEKS = 3;
    const peeks = new Map();
    const showPeek = (peek) => {
      const cell = live.querySelector(`tr[data-room="${CSS.escape(peek.code)}"] td.progress`);
      if (cell && peek.players.length) cell.replaceChildren(...peek.parts());
    };
    const table = (caption, body, id) => h("table", { class: "rooms", id },
      h("caption", {}, caption),
      h("thead", {}, h("tr", {}, cols.map((c) => h("th", { scope: "col" }, c)))), body);
    main.append(h("section", { id: "rooms", "aria-labelledby": "rooms-title" },
      h("h2", { id: "rooms-title" }, "Rooms"), table("Live", live, "live"),
      table("Recent", recent, "recent"),
      h("p", { class: "small" }, "Refreshed every two seconds. Open a room to watch its race; "
        + "a lobby with a free seat can be joined.")));
    let arena = null;
    const list = () => arena.send({ type: "list_rooms" });
    arena = new Arena((msg) => {
      if (msg.type === "welcome") list();
      if (msg.type !== "rooms") return;
      const row = (r) => h("tr", { "data-room": r.id, "data-status": r.status },
        h("td", {}, h("a", { href: `/watch/${r.id}` }, r.id),
          r.status === "lobby" && r.players < r.capacity
            ? [" ", h("a", { href: `/play/${r.id}`, class: "join" }, "join")] : null),
        h("td", {}, r.variant), h("td", { class: "status" }, r.status),
        h("td", { class: "names" }, r.names.join(", ") || "–",
          (r.bots || []).some((b) => b) ? h("span", { class: "bots small" }, " (bots: unrated)") : null),
        h("td", { class: "progress" }, "–"),
        h("td", {}, `${r.players}/${r.capacity}`), h("td", {}, r.spectators),
        h("td", { class: "rated" }, r.rated ? "rated" : "unrated"),
        h("td", {}, (r.open_seed ? "open" : "secret") + (r.winnable ? ", winnable" : "")),
        h("td", {}, ago(arena.now() - r.created_at) + " ago"));
      const done = (r) => r.status === "finished";
      live.replaceChildren(...msg.rooms.filter((r) => !done(r)).map(row));
      recent.replaceChildren(...msg.rooms.filter(done)
        .sort((a, b) => b.finished_at - a.finished_at).map(row));
      // The rooms peeked at stay while they race; the others by most watched, then newest.
      const racing = msg.rooms.filter((r) => r.status === "racing");
      racing.sort((a, b) => peeks.has(b.id) - peeks.has(a.id) || b.spectators - a.spectators
        || b.created_at - a.created_at);
      const chosen = new Set(racing.slice(0, PEEKS).map((r) => r.id));
      for (const [code, peek] of peeks) {
        if (!chosen.has(code) || peek.ws.readyState === WebSocket.CLOSED) { // (a lost one anew)
          peek.close();
          peeks.delete(code);
        }
      }
      for (const code of chosen) if (!peeks.has(code)) peeks.set(code, new Peek(code, showPeek));
      peeks.forEach(showPeek);
      main.dataset.refreshed = String(Date.now());
    });
    setInterval(list, 2000);
  }

  function watchPage(code) {
    document.title = `Room ${code} · Solitaire Arena`;
    let view = null;
    const arena = new Arena((msg) => {
      if (msg.type === "welcome") {
        view.join();
        return;
      }
      view.handle(msg);
    }, code);
    view = new RoomView(arena, code, main);
  }

  // The server's analysis of a replayed game (docs/protocol.md, "Analysis"): a strip along the
  // game, one button per position (the deal, then after each move) marked won, lost or not
  // settled, the move that lost a won game marked; a button goes to its position, and "Show the
  // winning line" gives a line that wins from a won one. `go(k)` shows position k.
  function analysisStrip(go) {
    const summary = h("p", { class: "analysis-summary", role: "status" }, "Analysis: asking the server…");
    const cells = h("ol", { class: "analysis-strip", "aria-label": "each position's verdict" });
    const show = h("button", { type: "button", class: "show-line", disabled: "disabled" }, "Show the winning line");
    const line = h("p", { class: "analysis-line", "aria-live": "polite" });
    const root = h("section", { class: "analysis", "aria-label": "analysis" }, summary, cells, show, line);
    let analysis = null;
    let at = 0;
    const verdict = (k) => (k === 0 ? analysis.deal : analysis.moves[k - 1].after);
    const lineFrom = (k) => analysis.moves.slice(k, analysis.won_until).map((m) => m.move)
      .concat(analysis.line);
    const draw = () => {
      if (!analysis) return;
      for (const li of cells.children) {
        const button = li.firstChild;
        const current = Number(button.dataset.position) === at;
        button.classList.toggle("current", current);
        if (current) button.setAttribute("aria-current", "step");
        else button.removeAttribute("aria-current");
      }
      show.disabled = verdict(at) !== "won";
      line.textContent = "";
    };
    const words = { won: "won", lost: "lost", unknown: "not settled" };
    return {
      root,
      failed(msg) {
        summary.textContent = `Analysis: ${msg.reason}`;
      },
      set(msg) {
        analysis = msg;
        const deal = { won: "this deal could be won", lost: "this deal could not be won",
          unknown: "whether this deal could be won is not settled" }[msg.deal];
        const losing = msg.losing_move
          ? `; move ${msg.losing_move}: ${msg.moves[msg.losing_move - 1].move} lost a won game` : "";
        summary.textContent = `Analysis: ${deal}${losing}.`;
        const labels = [["deal", "the deal", msg.deal, false]].concat(msg.moves.map((m, i) =>
          [m.move, `move ${i + 1}, ${m.move}`, m.after, m.lost]));
        cells.replaceChildren(...labels.map(([text, label, v, lost], k) => h("li", {},
          h("button", { type: "button", "data-position": k, "data-verdict": v,
            class: `verdict ${v}${lost ? " losing" : ""}`,
            "aria-label": `${label}: ${words[v]}${lost ? ", lost a won game" : ""}`,
            title: `${label}: ${words[v]}${lost ? ", lost a won game" : ""}` }, text))));
        draw();
      },
      at(k) {
        at = k;
        draw();
      },
      wire() {
        cells.addEventListener("click", (e) => {
          const button = e.target.closest("button");
          if (button) go(Number(button.dataset.position));
        });
        show.addEventListener("click", () => {
          if (analysis && verdict(at) === "won") {
            const moves = lineFrom(at);
            line.textContent = moves.length
              ? `A winning line from here: ${moves.join(" ")}` : "The game is won here.";
          }
        });
      },
    };
  }

  function replayPage(code, who) {
    document.title = `Replay ${code} · Solitaire Arena`;
    const state = { events: [], pos: 1, player: null, name: who, playing: null };
    const title = h("h1", {}, `Replay of ${who} in room ${code}`);
    const where = h("p", { class: "step", role: "status", "aria-live": "polite" }, "loading…");
    const buttons = [["first", "⏮ first", "Home"], ["back", "◀ back", "←"],
      ["play", "▶ play", "Space"], ["forward", "forward ▶", "→"], ["last", "last ⏭", "End"]]
      .map(([act, text, key]) => h("button", { type: "button", "data-act": act,
        "aria-keyshortcuts": key, title: `${act} (${key})` }, text));
    const controls = h("div", { class: "controls", role: "toolbar", "aria-label": "replay" }, buttons);
    const board = h("section", { class: "board replay" });
    // Position k (k moves made) is shown at event pos: the deal at 1, each move's event after.
    const posOf = (k) => {
      let made = 0;
      for (let i = 0; i < state.events.length; i += 1) {
        if (state.events[i].type === "moved") made += 1;
        if (made === k) return i + 1;
      }
      return state.events.length;
    };
    const strip = analysisStrip((k) => {
      state.pos = posOf(k);
      draw();
    });
    strip.wire();
    main.replaceChildren(title, controls, where, board, strip.root,
      h("p", { class: "small" }, "Keys: Home first, ← back, → forward, End last, Space play or pause."));
    const draw = () => {
      if (!state.events.length) return;
      const shown = state.events.slice(0, state.pos);
      const last = shown[shown.length - 1];
      board.dataset.player = state.player;
      board.dataset.pos = state.pos;
      board.replaceChildren(window.Board.render(window.Board.fold(shown)));
      const what = last.type === "moved" ? `move ${last.move}` : last.type.replace("_", " ");
      where.textContent = `event ${state.pos} of ${state.events.length}: ${what}`;
      strip.at(shown.filter((e) => e.type === "moved").length);
    };
    const go = (act) => {
      const n = state.events.length;
      if (act === "first") state.pos = 1;
      else if (act === "last") state.pos = n;
      else if (act === "back") state.pos = Math.max(1, state.pos - 1);
      else if (act === "forward") state.pos = Math.min(n, state.pos + 1);
      else if (act === "play") {
        if (state.playing) {
          clearInterval(state.playing);
          state.playing = null;
        } else {
          state.playing = setInterval(() => {
            if (state.pos >= state.events.length) go("play");
            else go("forward");
          }, 400);
        }
        buttons[2].textContent = state.playing ? "⏸ pause" : "▶ play";
      }
      draw();
    };
    controls.addEventListener("click", (e) => {
      const act = e.target.closest("button")?.dataset.act;
      if (act) go(act);
    });
    document.addEventListener("keydown", (e) => {
      const keys = { Home: "first", End: "last", ArrowLeft: "back", ArrowRight: "forward", " ": "play" };
      const onButton = e.target instanceof HTMLButtonElement && (e.key === " " || e.key === "Enter");
      if (keys[e.key] && !onButton && !e.altKey && !e.ctrlKey && !e.metaKey) {
        e.preventDefault();
        go(keys[e.key]);
      }
    });
    let room = null;
    let asked = 0;
    const askAnalysis = () => {
      asked += 1;
      arena.send({ type: "analysis", room: code, player: state.player, ref: "analysis" });
    };
    const arena = new Arena((msg) => {
      if (msg.type === "game_analysis") {
        strip.set(msg);
        draw();
        return;
      }
      if (msg.type === "error" && msg.ref === "analysis") {
        // Games are analysed after their race: ask again a while, then say why not.
        if (msg.code === "no_analysis" && asked < 30) setTimeout(askAnalysis, 2000);
        else strip.failed(msg);
        return;
      }
      if (msg.type === "welcome") arena.send({ type: "join", room: code, role: "spectator" });
      else if (msg.type === "room") room = msg.room;
      else if (msg.type === "error") where.textContent = `${msg.code}: ${msg.reason}`;
      if (!room) return;
      const p = room.players.find((q) => q.player === who || q.name === who);
      if (!p) {
        where.textContent = `No player ${who} in room ${code}.`;
        return;
      }
      state.player = p.player;
      title.textContent = `Replay of ${p.name} in room ${room.id}`;
      if (msg.type === "game" && msg.player === p.player) {
        state.events = msg.events.slice();
        if (!asked && room.status === "finished") askAnalysis();
      } else if (msg.type === "game_event" && msg.player === p.player
        && msg.version === state.events.length + 1) state.events.push(msg.event);
      else return;
      draw();
    }, code);
  }

  // TV: the most interesting live race, by this rule: racing before counting down, then the
  // highest-rated (the mean shown rating in the room's variant of its logged-in racers who have
  // one; a race without any comes after those with one), then the most spectators, then the
  // most racers, then the newest. Ratings come from `profile`, asked once a minute per account.
  // Its results stay up `linger` ms, then the next race.
  function tvPage() {
    document.title = "TV · Solitaire Arena";
    const linger = Number(new URLSearchParams(location.search).get("linger") || 10000);
    const note = h("p", { class: "tv-note", role: "status" }, "looking for a live race…");
    const stage = h("div", { class: "tv" });
    main.replaceChildren(h("h1", {}, "Arena TV"), note, stage);
    let view = null;
    let done = new Set();
    let arena = null;
    const known = new Map(); // account -> {at, ratings: {variant: shown rating}}
    const asked = new Map(); // account -> when its profile was asked
    let rooms = null;
    const look = () => {
      if (!view) arena.send({ type: "list_rooms" });
    };
    const rank = { racing: 0, countdown: 1 };
    const liveRooms = () => (rooms || []).filter((r) => r.status in rank && !done.has(r.id));
    const fresh = (account) => known.has(account) && Date.now() - known.get(account).at < 60000;
    const rating = (r) => {
      const shown = (r.accounts || []).filter((a) => a)
        .map((a) => known.get(a)?.ratings[r.variant]).filter((x) => x !== undefined);
      return shown.length ? shown.reduce((x, y) => x + y, 0) / shown.length : null;
    };
    const learnt = (account, ratings) => {
      known.set(account, { at: Date.now(), ratings });
      asked.delete(account);
      if (!view && asked.size === 0) pick();
    };
    // Ask the profiles still unknown (or stale); pick once every answer is in.
    const consider = () => {
      for (const [account, at] of asked) if (Date.now() - at > 5000) learnt(account, {});
      for (const r of liveRooms()) {
        for (const account of (r.accounts || []).filter((a) => a)) {
          if (fresh(account) || asked.has(account)) continue;
          asked.set(account, Date.now());
          arena.send({ type: "profile", name: account, ref: `tv:${account}` });
        }
      }
      if (asked.size === 0) pick();
    };
    const pick = () => {
      if (view) return;
      const live = liveRooms();
      const score = new Map(live.map((r) => [r.id, rating(r)]));
      const byRating = (a, b) => {
        const x = score.get(a.id), y = score.get(b.id);
        if (x === null || y === null) return (x === null) - (y === null);
        return y - x;
      };
      live.sort((a, b) => rank[a.status] - rank[b.status] || byRating(a, b)
        || b.spectators - a.spectators || b.players - a.players || b.created_at - a.created_at);
      if (!live.length) {
        note.textContent = "No live race right now; the next one appears here.";
        stage.replaceChildren();
        return;
      }
      const best = live[0];
      const mean = score.get(best.id);
      note.textContent = `Following room ${best.id}: ${best.names.join(", ")}`
        + (mean === null ? "" : ` (rated ${Math.round(mean)} on average)`);
      stage.dataset.room = best.id;
      view = new RoomView(arena, best.id, stage);
      view.join();
    };
    arena = new Arena((msg) => {
      const tvRef = typeof msg.ref === "string" && msg.ref.startsWith("tv:");
      if (msg.type === "welcome") {
        if (view) {
          view.close();
          view = null;
        }
        asked.clear();
        look();
      } else if (tvRef && msg.type === "player_card") {
        learnt(msg.ref.slice(3), Object.fromEntries(msg.ratings.map((x) => [x.variant, x.rating])));
      } else if (tvRef && msg.type === "error") {
        learnt(msg.ref.slice(3), {});
      } else if (msg.type === "rooms" && !view) {
        rooms = msg.rooms;
        consider();
      } else if (view) {
        view.handle(msg);
        if (msg.type === "finished" || (msg.type === "error" && msg.code === "no_such_room")) {
          const ended = view;
          done.add(ended.code);
          note.textContent = `Room ${ended.code} is over; the next race in ${linger / 1000} s.`;
          setTimeout(() => {
            ended.close();
            arena.send({ type: "leave" });
            if (view === ended) view = null;
            look();
          }, linger);
        }
      }
    });
    setInterval(look, 2000);
  }

  // ---- ratings: the leaderboards and a player's profile (docs/ratings.md) ----------------
  const VARIANTS = ["swiss", "quadrennial"];
  const VARIANT_NAME = { swiss: "Swiss", quadrennial: "Quadrennial" };

  function profileLink(name) {
    return h("a", { href: `/@/${encodeURIComponent(name)}` }, name);
  }

  function shownRating(rating, provisional) {
    return h("span", provisional ? { class: "provisional", title: "provisional: fewer than 10 rated races" } : {},
      provisional ? `${rating}?` : String(rating));
  }

  // An empty table says so.
  function none(columns) {
    return h("tr", { class: "none" }, h("td", { colspan: columns, class: "small" }, "none"));
  }

  function duration(ms) {
    if (ms === null || ms === undefined) return "–";
    const tenths = Math.round(ms / 100);
    const s = Math.floor(tenths / 10);
    return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, "0")}.${tenths % 10}`;
  }

  function leaderboardPage() {
    document.title = "Leaderboard · Solitaire Arena";
    const bodies = {};
    const counts = {};
    const sections = VARIANTS.map((v) => {
      bodies[v] = h("tbody");
      counts[v] = h("span", { class: "players" }, "");
      return h("section", { "aria-label": VARIANT_NAME[v] },
        h("table", { class: "leaderboard", id: `board-${v}`, "data-variant": v },
          h("caption", {}, `${VARIANT_NAME[v]} `, counts[v]),
          h("thead", {}, h("tr", {}, ["rank", "name", "rating", "games", "wins"]
            .map((c) => h("th", { scope: "col", class: c }, c)))), bodies[v]));
    });
    main.replaceChildren(h("h1", {}, "Leaderboard"), ...sections,
      h("p", { class: "small" }, "A rating followed by ? is provisional: fewer than 10 rated races "
        + "in the variant. Ratings are conservative (docs/ratings.md); refreshed every 10 s."));
    let arena = null;
    const ask = () => VARIANTS.forEach((v) => arena.send({ type: "leaderboard", variant: v, top: 100 }));
    arena = new Arena((msg) => {
      if (msg.type === "welcome") ask();
      if (msg.type !== "standings" || !bodies[msg.variant]) return;
      counts[msg.variant].textContent = `(${msg.players} rated player${msg.players === 1 ? "" : "s"})`;
      bodies[msg.variant].replaceChildren(...(msg.rows.length ? msg.rows.map((r) =>
        h("tr", { "data-account": r.account, "data-provisional": String(r.provisional) },
          h("td", { class: "rank" }, r.rank), h("td", { class: "name" }, profileLink(r.name)),
          h("td", { class: "rating" }, shownRating(r.rating, r.provisional)),
          h("td", { class: "games" }, r.games), h("td", { class: "wins" }, r.wins)))
        : [h("tr", {}, h("td", { colspan: 5, class: "small" }, "No rated player yet."))]));
      main.dataset.refreshed = String(Date.now());
    });
    setInterval(ask, 10000);
  }

  // A profile's tournaments: how many played, and each podium with a link to its standings.
  function tournamentsPart(card) {
    const t = card.tournaments || { played: 0, podiums: [] };
    const medal = { 1: "1st", 2: "2nd", 3: "3rd" };
    return h("section", { id: "tournaments", "aria-label": "tournaments" },
      h("h2", {}, "Tournaments"),
      h("p", { class: "played" }, `${t.played} tournament${t.played === 1 ? "" : "s"} played`
        + `, ${t.podiums.length} on the podium.`),
      t.podiums.length ? h("ol", { class: "podiums" }, t.podiums.map((p) =>
        h("li", { "data-tournament": p.tournament },
          h("span", { class: "medal" }, medal[p.place] || String(p.place)), " in ",
          h("a", { href: `/tournament/${encodeURIComponent(p.tournament)}` }, p.name),
          ` (${VARIANT_NAME[p.variant] || p.variant}, ${ago(Date.now() - p.at)} ago)`))) : null);
  }

  function profilePage(name) {
    document.title = `${name} · Solitaire Arena`;
    const title = h("h1", {}, name);
    const status = h("p", { class: "small", role: "status" }, "loading…");
    main.replaceChildren(title, status);
    let arena = null;
    arena = new Arena((msg) => {
      if (msg.type === "welcome") arena.send({ type: "profile", name, ref: "profile" });
      if (msg.ref !== "profile") return;
      if (msg.type === "error") {
        status.textContent = msg.code === "no_such_account"
          ? `There is no player ${name}.` : `${msg.code}: ${msg.reason}`;
        status.className = "error";
        return;
      }
      if (msg.type !== "player_card") return;
      const card = msg;
      document.title = `${card.name} · Solitaire Arena`;
      title.textContent = card.name;
      if (card.bot) {
        status.textContent = `${card.name} is a bot of level ${card.bot} of 5: a racer the server `
          + "plays. It never logs in, and races with a bot are unrated.";
        status.className = "bot-card";
        main.replaceChildren(title, status);
        main.dataset.refreshed = String(Date.now());
        return;
      }
      const ratings = h("table", { class: "profile-ratings", id: "ratings" },
        h("caption", {}, "Ratings"),
        h("thead", {}, h("tr", {}, ["variant", "rating", "rank", "games", "wins", "best win"]
          .map((c) => h("th", { scope: "col" }, c)))),
        h("tbody", {}, card.ratings.length ? card.ratings.map((r) =>
          h("tr", { "data-variant": r.variant },
            h("td", { class: "variant" }, VARIANT_NAME[r.variant] || r.variant),
            h("td", { class: "rating" }, shownRating(r.rating, r.provisional)),
            h("td", { class: "rank" }, r.rank === null ? "–" : `${r.rank} of ${r.players}`),
            h("td", { class: "games" }, r.games), h("td", { class: "wins" }, r.wins),
            h("td", { class: "best" }, duration(r.best_ms))))
          : h("tr", {}, h("td", { colspan: 6, class: "small" }, "No rated race yet."))));
      // A rated challenge is a race in the ratings, under its code: it has no room to replay.
      const challengeCodes = new Set((card.challenges || []).map((c) => c.code));
      const recent = h("table", { class: "profile-recent", id: "races" },
        h("caption", {}, "Recent rated races"),
        h("thead", {}, h("tr", {}, ["when", "variant", "room", "see", "place", "result", "rating", "change"]
          .map((c) => h("th", { scope: "col" }, c)))),
        h("tbody", {}, card.recent.length ? card.recent.map((r) => h("tr",
          challengeCodes.has(r.room) ? { "data-challenge": r.room } : { "data-room": r.room },
          h("td", { class: "when" }, `${ago(arena.now() - r.at)} ago`),
          h("td", { class: "variant" }, VARIANT_NAME[r.variant] || r.variant),
          h("td", { class: "room" }, r.room),
          h("td", { class: "see" }, challengeCodes.has(r.room)
            ? h("a", { href: `/play?challenge=${encodeURIComponent(r.room)}` }, "challenge standings")
            : [h("a", { href: `/replay/${encodeURIComponent(r.room)}/${encodeURIComponent(card.name)}`,
              class: "replay" }, "replay"), " · ",
            h("a", { href: `/watch/${encodeURIComponent(r.room)}`, class: "watch" }, "watch")]),
          h("td", { class: "place" }, `${r.place} of ${r.of}`),
          h("td", { class: "result" }, r.won ? "won" : r.timed_out ? "out of time" : "–"),
          h("td", { class: "rating" }, r.rating),
          h("td", { class: "change" }, r.delta > 0 ? `+${r.delta}` : String(r.delta))))
          : none(8)));
      const challenges = h("table", { class: "profile-challenges", id: "challenges" },
        h("caption", {}, "Finished challenges"),
        h("thead", {}, h("tr", {}, ["when", "variant", "challenge", "by", "place"]
          .map((c) => h("th", { scope: "col" }, c)))),
        h("tbody", {}, (card.challenges || []).length ? card.challenges.map((c) =>
          h("tr", { "data-challenge": c.code },
            h("td", { class: "when" }, `${ago(arena.now() - c.at)} ago`),
            h("td", { class: "variant" }, VARIANT_NAME[c.variant] || c.variant),
            h("td", { class: "code" }, c.code, " ", h("a", { href: `/play?challenge=${encodeURIComponent(c.code)}` },
              "standings")), h("td", { class: "by" }, c.creator),
            h("td", { class: "place" }, c.place === null ? "did not play" : `${c.place} of ${c.of}`)))
          : none(5)));
      status.textContent = "Races stay replayable while the server keeps their room.";
      status.className = "small";
      const mine = (window.Play.Keep.account() || "").toLowerCase() === card.name.toLowerCase();
      const marked = card.marked ? h("p", { class: "marked", role: "note" },
        "A moderator's fair-play mark: out of the leaderboards; its rated races count for nobody.") : null;
      const report = window.Play.Keep.key() && !mine && window.Mod
        ? h("p", { class: "report-player" }, window.Mod.reportButton(card.name)) : null;
      main.replaceChildren(title, ...[marked, report].filter(Boolean), ratings, recent, challenges, status);
      main.dataset.refreshed = String(Date.now());
      status.before(tournamentsPart(card));
    });
  }

  window.Viewer = { Arena, RoomView, errorText, clock, ago, ranking, STATUS_TEXT, profileLink };
  const path = location.pathname;
  let m;
  if (path === "/") {
    if (window.Home) window.Home.page(main);
    indexPage();
  } else if (path === "/play") window.Play.solo(main, new URLSearchParams(location.search));
  else if ((m = /^\/play\/([A-Za-z0-9]+)$/.exec(path))) window.Play.room(main, m[1].toLowerCase());
  else if (path === "/tv") tvPage();
  else if (path === "/leaderboard") leaderboardPage();
  else if (path === "/mod") window.Mod.page(main);
  else if (path === "/tournaments") window.Tournament.listPage(main);
  else if ((m = /^\/tournament\/([A-Za-z0-9]+)$/.exec(path))) window.Tournament.page(main, m[1]);
  else if ((m = /^\/@\/([^/]+)$/.exec(path))) profilePage(decodeURIComponent(m[1]));
  else if ((m = /^\/watch\/([A-Za-z0-9]+)$/.exec(path))) watchPage(m[1]);
  else if ((m = /^\/replay\/([A-Za-z0-9]+)\/([^/]+)$/.exec(path))) replayPage(m[1], decodeURIComponent(m[2]));
})();
