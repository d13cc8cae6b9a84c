// The Move field, the terminal's prompt in the page: it takes what `solitaire`'s prompt takes
// (client/play.py, client/commands.py): moves in the friendly notation (rules.js), `start`,
// `resign` (asked twice), `rematch`, `hint`, `moves`, `help`. A move is read against the board
// on screen once the last one's ack and event are in, as the terminal waits, and a refusal is
// worded as there. Beside it, what the page says about the room: the lead line, the buttons,
// the rating changes and the errors, in plain words.
"use strict";

window.PlayPrompt = (() => {
  const { h } = window.Board;
  const Rules = window.Rules;
  const VARIANTS = { swiss: "Swiss", quadrennial: "Quadrennial" };

  // ---- the terminal's texts ----------------------------------------------------------------
  const HELP = {
    swiss: "Moves: d deals a card; t3t5 or 3 5 moves t3's top card onto t5, t3t5x4 a run of 4; "
      + "t3f or 3f puts t3's top card on its foundation; wf the waste's top card, wt7 onto t7; "
      + "fst2 takes the spades foundation's top card back onto t2. Commands: moves, hint, "
      + "resign, start (in a race lobby), bot or bot LEVEL (a bot in the lobby of a race you "
      + "created), rematch (once the race is over).",
    quadrennial: "Moves: d deals a card; r5f or 5 puts r5's card on its foundation; wf the "
      + "waste's top card; redeal turns the waste over once the stock is empty (twice per "
      + "game). Commands: moves, hint, resign, start (in a race lobby), bot or bot LEVEL (a bot "
      + "in the lobby of a race you created), rematch (once the race is over).",
  };
  const KEYWORDS = {
    start: "start", resign: "resign", rematch: "rematch", hint: "hint", h: "hint",
    moves: "moves", legal: "moves", help: "help", "?": "help", y: "yes", yes: "yes",
  };

  function suggestionText(a) {
    if (a.move === null || a.move === undefined) {
      return a.status === "won" ? "Hint: the game is won." : "Hint: no move is left.";
    }
    if (a.status === "won" && !a.heuristic) {
      return `Hint: ${a.move} (a winning line, found in ${a.nodes.toLocaleString("en")} nodes)`;
    }
    if (a.status === "unwinnable") {
      return `Hint: no move wins from here (the solver searched every line); try undo, or a good move: ${a.move}.`;
    }
    return `Hint: no winning line proved within ${a.max_nodes.toLocaleString("en")} nodes; `
      + `a good move: ${a.move} (a heuristic's).`;
  }

  // client/play.py hint: in a race the server gives no hint; the public board's best guess.
  function publicHint(view) {
    const order = (m) => (m.endsWith("f") ? 0 : m[0] === "t" ? 1 : m[0] === "w" ? 2
      : m === "d" || m === "redeal" ? 3 : 4);
    const legal = [...Rules.legalMoves(view)].sort((a, b) => order(a) - order(b) || (a < b ? -1 : 1));
    return legal.length ? `Hint: try ${legal[0]} ('moves' lists every legal move).` : "Hint: no move is left.";
  }

  const sortMoves = (moves) => [...moves].sort((a, b) => {
    const x = a === "d" || a === "redeal" ? 0 : 1, y = b === "d" || b === "redeal" ? 0 : 1;
    return x - y || (a < b ? -1 : a > b ? 1 : 0);
  });

  function gameStatus(view, progress) {
    const cards = view.foundations.reduce((n, f) => n + f.length, 0);
    if (cards === 52) return `You won: all 52 cards up in ${view.moves} moves.`;
    const s = cards === 1 ? "" : "s";
    if (progress && progress.status === "timed_out") return `You ran out of time with ${cards} card${s} on the foundations.`;
    if (view.resigned) return `You resigned with ${cards} card${cards === 1 ? "" : "s"} on the foundations.`;
    if (progress && progress.status === "over" || (!view.stock && !Rules.legalMoves(view).size)) {
      return `No legal move left: ${cards} card${cards === 1 ? "" : "s"} on the foundations.`;
    }
    return null;
  }

  class Prompt {
    constructor(page) {
      this.page = page;
      this.pending = new Map(); // move id -> {text, move}
      this.waitVersion = 0; // the board follows the last ack before the next move is read
      this.queue = [];
      this.idPrefix = Math.random().toString(36).slice(2, 10);
      this.nextId = 1;
      this.confirming = null;
    }

    // ---- the Move field: exactly what the terminal's prompt takes ----
    typed(line) {
      const text = line.trim().split(/\s+/).join(" ");
      if (!text) return;
      this.page.error.textContent = "";
      if (this.confirming) {
        const pending = this.confirming;
        this.confirming = null;
        if (KEYWORDS[text.toLowerCase()] === "yes" || KEYWORDS[text.toLowerCase()] === pending) {
          this.command(pending);
        } else {
          this.page.say("Kept playing.");
        }
        return;
      }
      const lowered = text.toLowerCase();
      const kind = KEYWORDS[lowered] || (/^bot( [1-5])?$/.test(lowered) ? lowered : undefined);
      if (kind === "resign" && this.page.live()) {
        this.confirming = "resign";
        this.page.say("Resign this game? Type 'y' to resign, anything else to keep playing.");
        return;
      }
      if (kind && kind !== "yes") {
        this.command(kind);
        return;
      }
      this.play(text, null);
    }

    command(kind) {
      const r = this.page.room;
      const variant = (this.page.view && this.page.view.variant) || (r && r.variant) || "swiss";
      if (kind === "help") {
        this.page.say(HELP[variant]);
      } else if (kind === "moves") {
        if (!this.page.view) this.page.refuse("No game yet.");
        else {
          const legal = sortMoves(this.page.legal());
          this.page.say(`Legal moves: ${legal.length ? legal.join(" ") : "none"}`);
        }
      } else if (kind === "start") {
        if (!r || this.page.role !== "player") this.page.refuse("start: there is nothing to start here");
        else this.page.arena.send({ type: "start", ref: "cmd:start" });
      } else if (kind === "bot" || /^bot [1-5]$/.test(kind)) {
        if (!r || this.page.role !== "player" || r.status !== "lobby") {
          this.page.refuse("bot: bots join the lobby of a race you created");
        } else {
          const level = kind === "bot" ? 3 : Number(kind.slice(4));
          this.page.arena.send({ type: "add_bot", level, ref: "cmd:bot" });
          this.page.say("A bot takes a seat: this race is unrated.");
        }
      } else if (kind === "resign") {
        if (!this.page.live()) this.page.refuse("resign: the game is not on");
        else {
          this.page.arena.send({ type: "resign", ref: "cmd:resign" });
          this.page.say("resigned");
        }
      } else if (kind === "rematch") {
        if (!r || r.capacity === 1) this.page.refuse("rematch: a rematch is for a race, once it is over");
        else if (r.status !== "finished") this.page.refuse("rematch: once the race is over");
        else {
          this.page.arena.send({ type: "rematch", ref: "cmd:rematch" });
          this.page.say("Asking for a rematch…");
        }
      } else if (kind === "hint") {
        if (!this.page.view) this.page.refuse("No game yet.");
        else if (r && r.capacity === 1 && this.page.live()) this.page.arena.send({ type: "hint", ref: "cmd:hint" });
        else this.page.say(publicHint(this.page.view));
      }
    }

    // A move typed or clicked: read against the board on screen, sent once the board has
    // caught up with the last one acked (as the terminal waits), its refusal shown as there.
    play(text, move) {
      this.queue.push({ text, move });
      this.pump();
    }

    pump() {
      while (this.queue.length && !this.pending.size && this.page.events.length >= this.waitVersion) {
        const { text, move } = this.queue.shift();
        this.send(text, move);
      }
    }

    send(text, given) {
      if (!this.page.view) {
        this.page.refuse(`${text}: the game has not started yet`);
        return;
      }
      const lower = text.toLowerCase();
      if (!given && (lower === "f" || /^f \d$/.test(lower))) {
        this.page.refuse(`${text}: ${Rules.BARE_F[this.page.view.variant]}`);
        return;
      }
      let move = given;
      try {
        move = Rules.parseMove(given || text, this.page.view);
      } catch (e) {
        if (!(e instanceof Rules.IllegalMove)) throw e;
        this.page.refuse(Rules.reasonText(text, given, e.message));
        return;
      }
      const id = `${this.idPrefix}-${this.nextId++}`;
      this.pending.set(id, { text, move });
      this.page.arena.send({ type: "move", id, move });
    }

    acked(msg) {
      const p = this.pending.get(msg.id);
      if (!p) return;
      this.pending.delete(msg.id);
      this.waitVersion = Math.max(this.waitVersion, msg.version);
      this.page.say(p.text !== p.move ? `${p.text} -> ${p.move}` : `played ${p.move}`);
      this.pump();
    }

    rejected(msg) {
      const p = this.pending.get(msg.id);
      if (!p) return;
      this.pending.delete(msg.id);
      this.page.refuse(Rules.reasonText(p.text, p.move, msg.reason));
      this.pump();
    }
  }

  // What the page says about its room: the lead, the buttons, the ratings, the refusals.
  class Notes {
    constructor(page) {
      this.page = page;
    }

    describe() {
      const r = this.page.room;
      const variant = VARIANTS[r.variant] || r.variant;
      this.page.title.textContent = r.capacity > 1 ? `${variant} race, room ${r.id}` : `${variant}, solo`;
      if (this.page.role === "spectator") {
        // Why there was no seat for this page, once the room says how it stands.
        const why = this.page.noSeat === "room_full" ? `Room ${r.id} is full`
          : this.page.noSeat === "not_allowed" ? `Room ${r.id} is for the players matched to it`
            : r.status === "finished" ? "The race is over"
              : this.page.noSeat ? "The race has started" : `Room ${r.id}`;
        this.page.setLead(`${why}: you are watching it.`);
      } else if (r.status === "lobby" && this.page.how.kind === "quick") {
        this.page.setLead(`Matched in room ${r.id}: ${r.players.length} of ${r.capacity} seated; `
          + "the race starts when everyone is.");
      } else if (r.status === "lobby") {
        const link = `${location.origin}/play/${r.id}`;
        this.page.lead.replaceChildren(`Room ${r.id}: ${r.players.length} of ${r.capacity} seated. `
          + "Share this link to race: ", h("a", { href: link, class: "share" }, link),
        ". Type 'start' (or press Start) when everyone is in.");
      } else if (r.status === "countdown") {
        this.page.setLead("Get ready: the race starts at the end of the countdown.");
      } else if (r.status === "racing") {
        const mine = this.page.myProgress();
        const done = this.page.view && gameStatus(this.page.view, mine);
        if (done && r.capacity > 1) this.page.setLead(`${done} The others race on: their boards are below.`);
        else if (done) this.page.setLead(`${done} Next: a new deal from the home page.`);
        else if (this.page.daily) this.page.setLead(`The daily challenge of ${this.page.daily.date}: everyone plays `
          + "this deal today, one attempt each. Click a card then where it goes, or type a move.");
        else if (this.page.challenge) this.page.setLead(`Challenge ${this.page.challenge.challenge}: one attempt `
          + "each, at a time of your own. Click a card then where it goes, or type a move.");
        else this.page.setLead(r.capacity > 1
          ? "Race! Click a card then where it goes, or type a move."
          : "Click a card then where it goes, or type a move; 'hint' helps.");
      } else if (r.status === "finished") {
        this.page.setLead(this.page.how.kind === "tournament" ? "The race is over: back to the standings in a moment."
          : r.capacity > 1 ? "The race is over: the results are below. 'rematch' races again."
          : (this.page.view && gameStatus(this.page.view, this.page.myProgress())) || "The game is over.");
      } else if (r.status === "closed") {
        this.page.setLead(r.closed_reason === "unfilled"
          ? "This room closed: not enough of the players matched sat down for the start."
          : "This room closed: nobody stayed in its lobby.");
      }
    }

    drawButtons() {
      const r = this.page.room;
      const parts = [];
      const button = (text, act, extra = {}) => h("button", { type: "button", "data-act": act, ...extra }, text);
      if (r && this.page.role === "player") {
        if (r.status === "lobby" && this.page.how.kind !== "quick") parts.push(button("Start", "start"));
        if (r.status === "lobby" && this.page.how.kind === "create" && r.capacity > 1) {
          parts.push(button("Add a bot", "bot"));
        }
        if (r.status === "racing" && this.page.view && !gameStatus(this.page.view, this.page.myProgress())) {
          if (r.capacity === 1 && !this.page.challenge) parts.push(button("Hint", "hint"));
          parts.push(button("Resign", "resign"));
        }
        if (r.status === "finished" && r.capacity > 1 && !this.page.daily && this.page.how.kind !== "tournament") {
          parts.push(button("Rematch", "rematch"));
        }
      }
      if (r && this.page.how.kind !== "tournament" && (r.status === "finished" || (r.capacity === 1 && this.page.view && gameStatus(this.page.view, null)))) {
        parts.push(h("a", { href: `/play?variant=${r.variant}`, class: "button" }, "New deal"));
      }
      const key = parts.map((p) => p.dataset.act || p.textContent).join(",");
      if (this.page.buttons.dataset.key === key) return;
      this.page.buttons.dataset.key = key;
      this.page.buttons.replaceChildren(...parts);
      for (const b of this.page.buttons.querySelectorAll("button")) {
        b.addEventListener("click", () => {
          if (b.dataset.act === "resign" && !window.confirm("Resign this game?")) return;
          this.page.prompt.command(b.dataset.act);
        });
      }
    }

    showRatings(msg) {
      const rows = msg.changes.map((c) => h("tr", { "data-account": c.account },
        h("td", { class: "place" }, c.place), h("td", { class: "name" }, window.Viewer.profileLink(c.name)),
        h("td", { class: "before" }, c.before), h("td", { class: "after" }, c.after),
        h("td", { class: "delta" }, c.delta > 0 ? `+${c.delta}` : String(c.delta))));
      this.page.results.replaceChildren(h("table", { class: "rating-changes" },
        h("caption", {}, "Rating changes"),
        h("thead", {}, h("tr", {}, ["#", "racer", "before", "after", "change"].map((t) => h("th", { scope: "col" }, t)))),
        h("tbody", {}, rows)));
    }

    // A challenge's standings as the server lets this player see them, with each attempt's
    // replay once shown, and the seed checked by the reader when settled.
    showChallenge(msg) {
      const clock = (ms) => `${Math.floor(ms / 60000)}:${String(Math.floor(ms / 1000) % 60).padStart(2, "0")}`;
      const rows = msg.rows.map((r) => h("tr", { "data-account": r.account },
        h("td", { class: "place" }, r.place), h("td", { class: "name" }, window.Viewer.profileLink(r.name)),
        h("td", { class: "status" }, r.status), h("td", { class: "time" }, clock(r.elapsed_ms)),
        h("td", { class: "cards" }, r.foundations),
        h("td", {}, r.room ? h("a", { href: `/replay/${r.room}/${encodeURIComponent(r.name)}` }, "replay") : "")));
      const state = msg.status === "settled" ? "over: the seed is revealed"
        : `${msg.players} of ${msg.capacity} played; open until ${new Date(msg.closes_at).toUTCString()}`;
      const link = `${location.origin}${msg.link}`;
      this.page.results.replaceChildren(
        h("p", { class: "small" }, `Challenge ${msg.code}: ${state}. Share it: `, h("a", { href: link, class: "share" }, link)),
        msg.visible ? h("table", { class: "challenge-standings" }, h("caption", {}, "Standings"),
          h("thead", {}, h("tr", {}, ["#", "player", "status", "time", "cards", ""].map((t) => h("th", { scope: "col" }, t)))),
          h("tbody", {}, rows))
          : h("p", { class: "small" }, "The standings are shown once your game is over."));
    }

    failed(msg) {
      const ref = msg.ref;
      if (ref === "join" && ["wrong_status", "room_full", "not_allowed", "already_in_room"].includes(msg.code)) {
        // No seat to take: watch the race instead, as a spectator does.
        this.page.role = "spectator";
        this.page.arena.send({ type: "join", room: this.page.code, role: "spectator", ref: "watch" });
        this.page.noSeat = msg.code;
        return;
      }
      if (ref === "ratings") {
        this.page.results.replaceChildren(h("p", { class: "small" },
          msg.code === "not_rated" ? "This race was not rated." : `Ratings: ${msg.reason}`));
        return;
      }
      if (ref && String(ref).startsWith("cmd:")) {
        this.page.refuse(`${String(ref).slice(4)}: ${msg.reason}`);
        return;
      }
      if (ref === "challenge" && ["challenge_played", "challenge_closed", "challenge_full", "not_invited"]
        .includes(msg.code)) {
        // No attempt to play: the challenge as the server lets this reader see it.
        this.page.arena.send({ type: "challenge_show", challenge: this.page.how.challenge, ref: "challenge-show" });
      }
      if (msg.code === "rate_limited") {
        this.page.refuse("Too fast: the server dropped that one (rate limited).");
        return;
      }
      const text = msg.code === "not_logged_in" && ref === "daily"
        ? "The daily challenge is for accounts: log in on the home page first."
        : msg.code === "not_logged_in" && ref === "challenge"
          ? "Challenges are for accounts: log in on the home page first, then open the link again."
          : ref === "challenge" ? msg.reason
        : msg.code === "daily_played" ? "You have played today's deal of this variant already: "
          + "come back tomorrow, or see the day's standings."
          : window.Viewer.errorText(msg, this.page.code, this.page.limits);
      this.page.refuse(text);
      if (!this.page.room) this.page.setLead(text);
    }
  }

  return { Prompt, Notes, gameStatus, suggestionText, VARIANTS };
})();
