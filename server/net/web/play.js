// Playing from a link: a solo deal (/play?variant=V&seed=S), a seat in a room (/play/CODE), a
// quick race or the daily challenge. The terminal client (client/) is the reference: the same
// messages (docs/protocol.md), the same friendly notation (rules.js), the same commands at the
// Move field, and the server alone decides. A seat's resume token stays in this tab's
// sessionStorage and the account key in localStorage: never in a URL or a log.
"use strict";

window.Play = (() => {
  const { h, card: boardCard, SYMBOL } = window.Board;
  const Rules = window.Rules;
  const SUITS = "CDHS";
  const SUIT_NAME = { C: "clubs", D: "diamonds", H: "hearts", S: "spades" };
  const RANK_NAME = {
    A: "ace", 2: "two", 3: "three", 4: "four", 5: "five", 6: "six", 7: "seven",
    8: "eight", 9: "nine", T: "ten", J: "jack", Q: "queen", K: "king",
  };
  const DONE = new Set(["won", "over", "resigned"]);
  const VARIANTS = { swiss: "Swiss", quadrennial: "Quadrennial" };

  // ---- what the browser keeps ------------------------------------------------------------
  const Keep = {
    seat() {
      try {
        return JSON.parse(sessionStorage.getItem("arena.seat") || "null");
      } catch {
        return null;
      }
    },
    setSeat(seat) {
      if (seat) sessionStorage.setItem("arena.seat", JSON.stringify(seat));
      else sessionStorage.removeItem("arena.seat");
    },
    key: () => localStorage.getItem("arena.key"),
    account: () => localStorage.getItem("arena.account"),
    setAccount(name, key) {
      if (key) {
        localStorage.setItem("arena.key", key);
        localStorage.setItem("arena.account", name);
      } else {
        localStorage.removeItem("arena.key");
        localStorage.removeItem("arena.account");
      }
    },
    name: () => localStorage.getItem("arena.name") || "player",
    setName: (name) => localStorage.setItem("arena.name", name),
  };

  function helloFields(seatRoom) {
    const fields = { name: Keep.name() };
    const key = Keep.key();
    if (key) fields.key = key;
    const seat = Keep.seat();
    // Only the seat of the room this page is for: a new deal or a queue starts afresh.
    if (seat && seat.token && seatRoom && seatRoom() !== null && seat.room === seatRoom()) {
      fields.resume = seat.token;
    }
    return fields;
  }

  const cardName = (c) => `${RANK_NAME[c[0]]} of ${SUIT_NAME[c[1]]}`;

  // ---- the terminal's texts ----------------------------------------------------------------
  const HELP = {
    swiss: "Moves: d deals a card; t3t5 or 3 5 moves t3's top card onto t5, t3t5x4 a run of 4; "
      + "t3f or 3f puts t3's top card on its foundation; wf the waste's top card, wt7 onto t7; "
      + "fst2 takes the spades foundation's top card back onto t2. Commands: moves, hint, "
      + "resign, start (in a race lobby), rematch (once the race is over).",
    quadrennial: "Moves: d deals a card; r5f or 5 puts r5's card on its foundation; wf the "
      + "waste's top card; redeal turns the waste over once the stock is empty (twice per "
      + "game). Commands: moves, hint, resign, start (in a race lobby), rematch (once the race "
      + "is over).",
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
    if (view.resigned) return `You resigned with ${cards} card${cards === 1 ? "" : "s"} on the foundations.`;
    if (progress && progress.status === "over" || (!view.stock && !Rules.legalMoves(view).size)) {
      return `No legal move left: ${cards} card${cards === 1 ? "" : "s"} on the foundations.`;
    }
    return null;
  }

  // ---- the page --------------------------------------------------------------------------
  class PlayPage {
    constructor(root, how) {
      this.root = root;
      this.how = how; // {kind: "solo"|"room"|"quick"|"daily"|"create", ...}
      this.code = how.code || null;
      this.me = null;
      this.role = null;
      this.events = [];
      this.view = null;
      this.room = null;
      this.finished = null;
      this.selection = null; // {src, n, key}
      this.pending = new Map(); // move id -> {text, move}
      this.waitVersion = 0; // the board follows the last ack before the next move is read
      this.queue = [];
      this.idPrefix = Math.random().toString(36).slice(2, 10);
      this.nextId = 1;
      this.confirming = null;
      this.watching = false;
      this.asked = false;
      this.ratingsAsked = null;
      this.build();
      this.arena = new window.Viewer.Arena((msg) => this.handle(msg), this.code,
        () => helloFields(() => this.code));
      window.arenaPage = this; // the page's state, for its tests (tests/web/) to read
    }

    // ---- layout ----
    build() {
      this.title = h("h1", { class: "play-title" }, "Solitaire");
      this.lead = h("p", { class: "lead", id: "lead" }, "connecting…");
      this.boardRoot = h("section", { class: "myboard", "aria-label": "your board", id: "myboard" });
      this.said = h("p", { class: "said", id: "said", role: "status", "aria-live": "polite" });
      this.error = h("p", { class: "error", id: "refused", role: "alert" });
      this.input = h("input", {
        type: "text", id: "move", "aria-label": "Move", autocomplete: "off", autocapitalize: "off",
        spellcheck: "false", enterkeyhint: "send", placeholder: "e.g. 3 5, wf, d, hint",
      });
      const form = h("form", { class: "moveform", id: "moveform" }, this.input,
        h("button", { type: "submit" }, "Play"));
      form.addEventListener("submit", (e) => {
        e.preventDefault();
        const text = this.input.value;
        this.input.value = "";
        this.typed(text);
      });
      this.buttons = h("div", { class: "controls", role: "toolbar", "aria-label": "game" });
      this.results = h("section", { class: "ratings", id: "ratings", "aria-label": "rating changes" });
      const panelRoot = h("section", { class: "race", id: "race", "aria-label": "race" });
      this.panelRoot = panelRoot;
      this.root.replaceChildren(this.title, this.lead,
        h("div", { class: "play" },
          h("div", { class: "mine" }, this.boardRoot, this.error, this.said, form, this.buttons),
          h("div", { class: "side" }, panelRoot, this.results)));
      this.root.addEventListener("keydown", (e) => {
        if (e.key === "Escape" && this.selection) {
          this.select(null);
        }
      });
    }

    setLead(text) {
      this.lead.textContent = text;
    }

    say(text) {
      this.said.textContent = text;
      this.error.textContent = "";
    }

    refuse(text) {
      this.error.textContent = text;
    }

    // ---- the connection ----
    handle(msg) {
      const view = this.roomView;
      switch (msg.type) {
        case "welcome": return this.welcome(msg);
        case "closed":
          this.refuse(`Disconnected: ${msg.reason}.`);
          return;
        case "joined": return this.joined(msg);
        case "room":
          this.room = msg.room;
          if (!this.code && msg.ref === "create") {
            this.enter(msg.room.id);
            this.arena.send({ type: "join", room: msg.room.id, ref: "join" });
            return;
          }
          break;
        case "game":
          if (msg.player === this.me) {
            this.events = msg.events.slice();
            this.refold();
          }
          break;
        case "game_event":
          if (msg.player === this.me) {
            if (msg.version === this.events.length + 1) {
              this.events.push(msg.event);
              this.view = window.Board.step(this.view, msg.event);
              this.drawBoard();
              this.afterEvent();
            } else if (msg.version > this.events.length + 1) {
              this.arena.send({ type: "watch", player: this.me });
            }
          }
          break;
        case "ack": return this.acked(msg);
        case "reject": return this.rejected(msg);
        case "suggestion":
          this.say(suggestionText(msg));
          return;
        case "finished":
          this.finished = msg;
          break;
        case "rating_changes": return this.showRatings(msg);
        case "queued":
          this.setLead(`Searching for a ${VARIANTS[msg.variant]} race of ${msg.players}: `
            + `${msg.waiting} waiting, ratings ${msg.range}${msg.rated ? "" : " (guests)"}…`);
          return;
        case "matched":
          this.setLead(`Matched: room ${msg.room}. The race starts when everyone is seated.`);
          this.enter(msg.room);
          return;
        case "daily_started":
          this.setLead(`The daily challenge of ${msg.date} (${VARIANTS[msg.variant]}): `
            + "everyone plays this deal today; its seed is revealed tomorrow.");
          this.daily = msg;
          this.enter(msg.room);
          return;
        case "logged_out":
          Keep.setAccount(null, null);
          return;
        case "error": return this.failed(msg);
        default:
          break;
      }
      if (view) view.handle(msg);
      this.afterRoom(msg);
    }

    welcome(msg) {
      this.limits = msg.limits || {};
      const seat = Keep.seat();
      if (msg.resumed && msg.room) {
        // Back in the seat: the server sends the room, the game and the results; moves not
        // answered before the drop go again with their ids (answered at most once).
        Keep.setSeat({ ...seat, token: msg.token, room: msg.room, player: msg.session });
        this.me = msg.session;
        this.role = "player";
        if (this.code !== msg.room || !this.roomView) this.enter(msg.room);
        for (const [id, p] of this.pending) this.arena.send({ type: "move", id, move: p.move });
        this.say(this.events.length ? "Reconnected: back in your seat." : "Back in your seat.");
        return;
      }
      if (seat && seat.room === this.code) Keep.setSeat(null); // expired: a new session
      this.token = msg.token;
      this.session = msg.session;
      if (this.code && this.role === "spectator") {
        this.arena.send({ type: "join", room: this.code, role: "spectator", ref: "watch" });
        return;
      }
      if (this.code) {
        this.arena.send({ type: "join", room: this.code, ref: "join" });
        return;
      }
      const how = this.how;
      if (how.kind === "solo" || how.kind === "create") {
        const msg = { type: "create_room", variant: how.variant, ref: "create", ...how.options };
        this.arena.send(msg);
        this.setLead(how.kind === "solo" ? "Dealing…" : "Creating the race…");
      } else if (how.kind === "quick") {
        this.arena.send({ type: "quick", variant: how.variant, players: how.players, ref: "quick" });
      } else if (how.kind === "daily") {
        this.arena.send({ type: "daily", variant: how.variant, ref: "daily" });
      }
    }

    // A room to be in: its panel, and the address bar naming it so a reload comes back here.
    enter(code) {
      if (this.roomView && this.code === code) return;
      if (this.roomView) this.roomView.close();
      this.code = code;
      this.arena.room = code;
      this.events = [];
      this.view = null;
      this.finished = null;
      this.watching = false;
      this.asked = false;
      this.ratingsAsked = null;
      this.results.replaceChildren();
      this.roomView = new window.Viewer.RoomView(this.arena, code, this.panelRoot, this.me);
      if (location.pathname !== `/play/${code}`) history.replaceState(null, "", `/play/${code}`);
      document.title = `Room ${code} · Solitaire Arena`;
      this.drawBoard();
    }

    joined(msg) {
      if (msg.room !== this.code || !this.roomView) this.enter(msg.room);
      this.role = msg.role;
      if (msg.role === "player") {
        this.me = msg.player;
        this.roomView.me = msg.player;
        Keep.setSeat({ room: msg.room, token: this.token || (Keep.seat() || {}).token, player: msg.player });
        if (this.how.kind === "solo" && msg.ref === "join") this.arena.send({ type: "start" });
      } else {
        this.me = null;
        this.setLead(`You are watching room ${msg.room}.`);
      }
      this.drawButtons();
    }

    failed(msg) {
      const ref = msg.ref;
      if (ref === "join" && ["wrong_status", "room_full", "not_allowed", "already_in_room"].includes(msg.code)) {
        // No seat to take: watch the race instead, as a spectator does.
        this.role = "spectator";
        this.arena.send({ type: "join", room: this.code, role: "spectator", ref: "watch" });
        this.say(msg.code === "room_full" ? "The room is full: you are watching it."
          : "The race has started: you are watching it.");
        return;
      }
      if (ref === "ratings") {
        this.results.replaceChildren(h("p", { class: "small" },
          msg.code === "not_rated" ? "This race was not rated." : `Ratings: ${msg.reason}`));
        return;
      }
      if (ref && String(ref).startsWith("cmd:")) {
        this.refuse(`${String(ref).slice(4)}: ${msg.reason}`);
        return;
      }
      if (msg.code === "rate_limited") {
        this.refuse("Too fast: the server dropped that one (rate limited).");
        return;
      }
      const text = msg.code === "not_logged_in" && ref === "daily"
        ? "The daily challenge is for accounts: log in on the home page first."
        : msg.code === "daily_played" ? "You have played today's deal of this variant already: "
          + "come back tomorrow, or see the day's standings."
          : window.Viewer.errorText(msg, this.code, this.limits);
      this.refuse(text);
      if (!this.room) this.setLead(text);
    }

    // ---- the room's state as the page shows it ----
    capacity() {
      return this.room ? this.room.capacity : 1;
    }

    myProgress() {
      return this.room && this.me ? this.room.players.find((p) => p.player === this.me) : null;
    }

    afterRoom(msg) {
      const r = this.room;
      if (!r) return;
      if (["room", "countdown", "started", "finished", "progress"].includes(msg.type)) {
        this.describe();
        this.drawButtons();
      }
      const mine = this.myProgress();
      const race = r.capacity > 1;
      // After one's own game, the others' boards, under the same fairness as any spectator.
      if (race && this.role === "player" && !this.watching
        && (r.status === "finished" || (mine && DONE.has(mine.status)))) {
        this.watching = true;
        this.arena.send({ type: "watch", ref: "watch-others" });
      }
      if ((this.finished || r.status === "finished") && r.rated && race && this.ratingsAsked !== r.id) {
        this.ratingsAsked = r.id;
        this.arena.send({ type: "race_ratings", room: r.id, ref: "ratings" });
      }
    }

    describe() {
      const r = this.room;
      const variant = VARIANTS[r.variant] || r.variant;
      this.title.textContent = r.capacity > 1 ? `${variant} race, room ${r.id}` : `${variant}, solo`;
      if (this.role === "spectator") {
        this.setLead(`You are watching room ${r.id}.`);
      } else if (r.status === "lobby") {
        const link = `${location.origin}/play/${r.id}`;
        this.lead.replaceChildren(`Room ${r.id}: ${r.players.length} of ${r.capacity} seated. `
          + "Share this link to race: ", h("a", { href: link, class: "share" }, link),
        ". Type 'start' (or press Start) when everyone is in.");
      } else if (r.status === "countdown") {
        this.setLead("Get ready: the race starts at the end of the countdown.");
      } else if (r.status === "racing") {
        const mine = this.myProgress();
        const done = this.view && gameStatus(this.view, mine);
        if (done && r.capacity > 1) this.setLead(`${done} The others race on: their boards are below.`);
        else if (done) this.setLead(`${done} Next: a new deal from the home page.`);
        else if (this.daily) this.setLead(`The daily challenge of ${this.daily.date}: everyone plays `
          + "this deal today, one attempt each. Click a card then where it goes, or type a move.");
        else this.setLead(r.capacity > 1
          ? "Race! Click a card then where it goes, or type a move."
          : "Click a card then where it goes, or type a move; 'hint' helps.");
      } else if (r.status === "finished") {
        this.setLead(r.capacity > 1 ? "The race is over: the results are below. 'rematch' races again."
          : (this.view && gameStatus(this.view, null)) || "The game is over.");
      } else if (r.status === "closed") {
        this.setLead(r.closed_reason === "unfilled"
          ? "This room closed: not enough of the players matched sat down for the start."
          : "This room closed: nobody stayed in its lobby.");
      }
    }

    drawButtons() {
      const r = this.room;
      const parts = [];
      const button = (text, act, extra = {}) => h("button", { type: "button", "data-act": act, ...extra }, text);
      if (r && this.role === "player") {
        if (r.status === "lobby") parts.push(button("Start", "start"));
        if (r.status === "racing" && this.view && !gameStatus(this.view, this.myProgress())) {
          if (r.capacity === 1) parts.push(button("Hint", "hint"));
          parts.push(button("Resign", "resign"));
        }
        if (r.status === "finished" && r.capacity > 1 && !this.daily) parts.push(button("Rematch", "rematch"));
      }
      if (r && (r.status === "finished" || (r.capacity === 1 && this.view && gameStatus(this.view, null)))) {
        parts.push(h("a", { href: `/play?variant=${r.variant}`, class: "button" }, "New deal"));
      }
      const key = parts.map((p) => p.dataset.act || p.textContent).join(",");
      if (this.buttons.dataset.key === key) return;
      this.buttons.dataset.key = key;
      this.buttons.replaceChildren(...parts);
      for (const b of this.buttons.querySelectorAll("button")) {
        b.addEventListener("click", () => {
          if (b.dataset.act === "resign" && !window.confirm("Resign this game?")) return;
          this.command(b.dataset.act);
        });
      }
    }

    // ---- my board ----
    refold() {
      this.view = this.events.length ? window.Board.fold(this.events) : null;
      this.drawBoard();
      this.afterEvent();
    }

    afterEvent() {
      if (this.room) this.describe();
      this.drawButtons();
      this.pump();
    }

    legal() {
      return this.view && this.live() ? Rules.legalMoves(this.view) : new Set();
    }

    live() {
      const r = this.room;
      return this.role === "player" && r && r.status === "racing" && this.view
        && !gameStatus(this.view, this.myProgress());
    }

    // The moves the selection may make: {destination token: move}.
    targets() {
      const sel = this.selection;
      const out = new Map();
      if (!sel) return out;
      for (const m of this.legal()) {
        if (!m.startsWith(sel.src)) continue;
        const rest = m.slice(sel.src.length);
        const hit = /^(t[1-9]|f)(?:x([0-9]+))?$/.exec(rest);
        if (!hit) continue;
        if ((hit[2] ? Number(hit[2]) : 1) !== sel.n) continue;
        out.set(hit[1], m);
      }
      return out;
    }

    drawBoard() {
      const v = this.view;
      const focused = document.activeElement && this.boardRoot.contains(document.activeElement)
        ? document.activeElement.dataset.key : null;
      if (!v) {
        this.boardRoot.replaceChildren(h("p", { class: "small" },
          this.role === "spectator" ? "" : "Your board appears when the race starts."));
        if (this.role === "spectator") this.boardRoot.hidden = true;
        return;
      }
      this.boardRoot.hidden = false;
      const button = (key, label, attrs, ...children) => h("button",
        { type: "button", class: "spot", "data-key": key, "aria-label": label, "data-label": label, ...attrs },
        ...children);
      const face = (c) => {
        const red = c[1] === "D" || c[1] === "H";
        return h("span", { class: `face ${red ? "red" : "black"}`, "aria-hidden": "true" },
          h("span", { class: "rank" }, c[0] === "T" ? "10" : c[0]),
          h("span", { class: "suit" }, SYMBOL[c[1]]));
      };
      const cardButton = (key, c, src, n, dst, where) => button(key, `${cardName(c)}, ${where}`,
        { "data-src": src, "data-n": n, "data-dst": dst, "data-card": c, draggable: "true",
          class: `spot card ${c[1] === "D" || c[1] === "H" ? "red" : "black"}` },
        face(c));
      const top = h("div", { class: "toprow" });
      const stockLabel = v.stock ? `stock, ${v.stock} cards: deal one`
        : v.variant === "quadrennial" && v.waste.length && v.redeals ? `stock empty: redeal (${v.redeals} left)`
          : "stock, empty";
      top.append(button("stock", stockLabel, { "data-act": "stock", class: "spot pile stock" },
        h("span", { class: "stock-face", "aria-hidden": "true" }, h("span", { class: "small" }, "stock"),
          v.stock ? String(v.stock) : v.variant === "quadrennial" && v.redeals && v.waste.length ? "↻ redeal" : "empty")));
      const w = v.waste[v.waste.length - 1];
      top.append(w ? cardButton("waste", w, "w", 1, null, `top of the waste (${v.waste.length} cards)`)
        : button("waste", "waste, empty", { class: "spot pile empty" }, h("span", { "aria-hidden": "true" }, "waste")));
      if (v.variant === "quadrennial") top.append(h("span", { class: "small redeals" }, `${v.redeals} redeal${v.redeals === 1 ? "" : "s"} left`));
      const found = h("div", { class: "foundations", role: "group", "aria-label": "foundations" });
      [...SUITS].forEach((s, i) => {
        const f = v.foundations[i];
        const c = f[f.length - 1];
        const label = `${SUIT_NAME[s]} foundation, ${f.length} card${f.length === 1 ? "" : "s"}`
          + (c ? `, ${cardName(c)} on top` : "");
        const attrs = { "data-dst": "f", "data-top": "1", class: "spot pile foundation" };
        if (c && v.variant === "swiss") Object.assign(attrs, { "data-src": `f${s.toLowerCase()}`, "data-n": 1 });
        found.append(button(`f${s}`, label, attrs,
          c ? face(c) : h("span", { class: "face empty", "aria-hidden": "true" }, SYMBOL[s])));
      });
      top.append(found, h("span", { class: "count", "aria-label": "cards on the foundations" },
        `${v.foundations.reduce((n, f) => n + f.length, 0)}/52`));
      const body = h("div", { class: v.variant === "swiss" ? "piles tableau-play" : "piles reserve-play" });
      if (v.variant === "swiss") {
        v.tableau.forEach((pile, i) => {
          const col = h("div", { class: "col", role: "group", "aria-label": `t${i + 1}, ${pile.length} card${pile.length === 1 ? "" : "s"}` },
            h("span", { class: "label", "aria-hidden": "true" }, `t${i + 1}`));
          if (!pile.length) {
            col.append(button(`t${i + 1}`, `t${i + 1}, empty`,
              { "data-dst": `t${i + 1}`, "data-top": "1", class: "spot pile empty" }));
          }
          pile.forEach((c, k) => {
            const b = cardButton(`t${i + 1}:${k}`, c, `t${i + 1}`, pile.length - k, `t${i + 1}`,
              k === pile.length - 1 ? `top of t${i + 1}` : `t${i + 1}, ${pile.length - k} from the top`);
            if (k === pile.length - 1) b.dataset.top = "1";
            col.append(b);
          });
          body.append(col);
        });
      } else {
        v.reserve.forEach((c, i) => {
          const slot = h("div", { class: "col" }, h("span", { class: "label", "aria-hidden": "true" }, `r${i + 1}`));
          slot.append(c ? cardButton(`r${i + 1}`, c, `r${i + 1}`, 1, null, `r${i + 1}`)
            : button(`r${i + 1}`, `r${i + 1}, empty`, { class: "spot pile empty" }));
          body.append(slot);
        });
      }
      const board = h("div", { class: `playboard ${v.variant}`, "data-moves": v.moves,
        "data-version": this.events.length }, top, body);
      this.boardRoot.replaceChildren(board);
      this.wire(board);
      this.mark();
      if (focused) {
        const again = board.querySelector(`[data-key="${CSS.escape(focused)}"]`);
        if (again) again.focus();
      }
    }

    wire(board) {
      board.addEventListener("click", (e) => {
        const el = e.target.closest("button.spot");
        if (el) this.activate(el);
      });
      board.addEventListener("dblclick", (e) => {
        const el = e.target.closest("button.spot[data-src]");
        if (!el) return;
        const move = `${el.dataset.src}f`;
        if (Number(el.dataset.n) === 1 && this.legal().has(move)) {
          this.select(null);
          this.play(move, move);
        }
      });
      board.addEventListener("dragstart", (e) => {
        const el = e.target.closest("button.spot[data-src]");
        if (!el) return;
        this.select({ src: el.dataset.src, n: Number(el.dataset.n), key: el.dataset.key });
        e.dataTransfer.setData("text/plain", el.dataset.src);
        e.dataTransfer.effectAllowed = "move";
      });
      board.addEventListener("dragover", (e) => {
        const el = e.target.closest("button.spot[data-dst]");
        if (el && this.targets().has(el.dataset.dst)) e.preventDefault();
      });
      board.addEventListener("drop", (e) => {
        const el = e.target.closest("button.spot[data-dst]");
        if (!el) return;
        e.preventDefault();
        this.activate(el);
      });
    }

    select(sel) {
      this.selection = sel;
      this.mark();
    }

    // The selection and its legal destinations, shown in place (the focus stays put).
    mark() {
      const sel = this.selection;
      const targets = this.targets();
      for (const b of this.boardRoot.querySelectorAll("button.spot")) {
        const selected = Boolean(sel && b.dataset.src === sel.src && Number(b.dataset.n) === sel.n);
        // Marked where the card would land: a pile's top card, an empty pile, a foundation.
        const target = Boolean(b.dataset.dst && targets.has(b.dataset.dst) && b.dataset.top);
        b.classList.toggle("selected", selected);
        b.classList.toggle("target", target);
        if (b.dataset.src) b.setAttribute("aria-pressed", String(selected));
        b.setAttribute("aria-label", b.dataset.label + (target ? "; a legal place for the selection" : ""));
      }
    }

    // A click, a tap, Enter or Space on a spot of the board.
    activate(el) {
      if (!this.live()) {
        this.refuse(this.view ? "The game is not on." : "The race has not started yet.");
        return;
      }
      if (el.dataset.act === "stock") {
        this.select(null);
        const move = this.legal().has("redeal") ? "redeal" : "d";
        this.play(move, move);
        return;
      }
      const sel = this.selection;
      const own = (src, n) => [...this.legal()].some((m) => m.startsWith(src)
        && (n === 1 ? !/x/.test(m) : m.endsWith(`x${n}`)));
      if (sel) {
        const dst = el.dataset.dst;
        if (el.dataset.src === sel.src && Number(el.dataset.n) === sel.n) {
          this.select(null);
          this.say("Selection cleared.");
          return;
        }
        // A legal place: the move. Another card that can move: a new selection. Anything
        // else: the move anyway, so the rules say why it is refused, as at the prompt.
        if (dst && (this.targets().has(dst) || !el.dataset.src || !own(el.dataset.src, Number(el.dataset.n)))) {
          const move = `${sel.src}${dst}` + (sel.n > 1 ? `x${sel.n}` : "");
          this.select(null);
          this.play(move, move);
          return;
        }
      }
      if (el.dataset.src) {
        this.select({ src: el.dataset.src, n: Number(el.dataset.n), key: el.dataset.key });
        const n = this.targets().size;
        this.say(n ? `Selected ${el.getAttribute("aria-label").split(";")[0]}: ${n} place${n === 1 ? "" : "s"} it may go, highlighted.`
          : `Selected ${el.getAttribute("aria-label")}: it has no legal move now.`);
      }
    }

    // ---- the Move field: exactly what the terminal's prompt takes ----
    typed(line) {
      const text = line.trim().split(/\s+/).join(" ");
      if (!text) return;
      this.error.textContent = "";
      if (this.confirming) {
        const pending = this.confirming;
        this.confirming = null;
        if (KEYWORDS[text.toLowerCase()] === "yes" || KEYWORDS[text.toLowerCase()] === pending) {
          this.command(pending);
        } else {
          this.say("Kept playing.");
        }
        return;
      }
      const kind = KEYWORDS[text.toLowerCase()];
      if (kind === "resign" && this.live()) {
        this.confirming = "resign";
        this.say("Resign this game? Type 'y' to resign, anything else to keep playing.");
        return;
      }
      if (kind && kind !== "yes") {
        this.command(kind);
        return;
      }
      this.play(text, null);
    }

    command(kind) {
      const r = this.room;
      const variant = (this.view && this.view.variant) || (r && r.variant) || "swiss";
      if (kind === "help") {
        this.say(HELP[variant]);
      } else if (kind === "moves") {
        if (!this.view) this.refuse("No game yet.");
        else {
          const legal = sortMoves(this.legal());
          this.say(`Legal moves: ${legal.length ? legal.join(" ") : "none"}`);
        }
      } else if (kind === "start") {
        if (!r || this.role !== "player") this.refuse("start: there is nothing to start here");
        else this.arena.send({ type: "start", ref: "cmd:start" });
      } else if (kind === "resign") {
        if (!this.live()) this.refuse("resign: the game is not on");
        else this.arena.send({ type: "resign", ref: "cmd:resign" });
      } else if (kind === "rematch") {
        if (!r || r.capacity === 1) this.refuse("rematch: a rematch is for a race, once it is over");
        else if (r.status !== "finished") this.refuse("rematch: once the race is over");
        else {
          this.arena.send({ type: "rematch", ref: "cmd:rematch" });
          this.say("Asking for a rematch…");
        }
      } else if (kind === "hint") {
        if (!this.view) this.refuse("No game yet.");
        else if (r && r.capacity === 1 && this.live()) this.arena.send({ type: "hint", ref: "cmd:hint" });
        else this.say(publicHint(this.view));
      }
    }

    // A move typed or clicked: read against the board on screen, sent once the board has
    // caught up with the last one acked (as the terminal waits), its refusal shown as there.
    play(text, move) {
      this.queue.push({ text, move });
      this.pump();
    }

    pump() {
      while (this.queue.length && !this.pending.size && this.events.length >= this.waitVersion) {
        const { text, move } = this.queue.shift();
        this.send(text, move);
      }
    }

    send(text, given) {
      if (!this.view) {
        this.refuse(`${text}: the game has not started yet`);
        return;
      }
      const lower = text.toLowerCase();
      if (!given && (lower === "f" || /^f \d$/.test(lower))) {
        this.refuse(`${text}: ${Rules.BARE_F[this.view.variant]}`);
        return;
      }
      let move = given;
      try {
        move = Rules.parseMove(given || text, this.view);
      } catch (e) {
        if (!(e instanceof Rules.IllegalMove)) throw e;
        this.refuse(Rules.reasonText(text, given, e.message));
        return;
      }
      const id = `${this.idPrefix}-${this.nextId++}`;
      this.pending.set(id, { text, move });
      this.arena.send({ type: "move", id, move });
    }

    acked(msg) {
      const p = this.pending.get(msg.id);
      if (!p) return;
      this.pending.delete(msg.id);
      this.waitVersion = Math.max(this.waitVersion, msg.version);
      this.say(p.text !== p.move ? `${p.text} -> ${p.move}` : `played ${p.move}`);
      this.pump();
    }

    rejected(msg) {
      const p = this.pending.get(msg.id);
      if (!p) return;
      this.pending.delete(msg.id);
      this.refuse(Rules.reasonText(p.text, p.move, msg.reason));
      this.pump();
    }

    showRatings(msg) {
      const rows = msg.changes.map((c) => h("tr", { "data-account": c.account },
        h("td", { class: "place" }, c.place), h("td", { class: "name" }, window.Viewer.profileLink(c.name)),
        h("td", { class: "before" }, c.before), h("td", { class: "after" }, c.after),
        h("td", { class: "delta" }, c.delta > 0 ? `+${c.delta}` : String(c.delta))));
      this.results.replaceChildren(h("table", { class: "rating-changes" },
        h("caption", {}, "Rating changes"),
        h("thead", {}, h("tr", {}, ["#", "racer", "before", "after", "change"].map((t) => h("th", { scope: "col" }, t)))),
        h("tbody", {}, rows)));
    }
  }

  // ---- routes ----------------------------------------------------------------------------
  function seedValue(text) {
    const t = text.trim();
    return /^-?[0-9]{1,18}$/.test(t) ? Number(t) : t;
  }

  function solo(root, params) {
    const variant = VARIANTS[params.get("variant")] ? params.get("variant") : "swiss";
    if (params.has("quick")) {
      const v = VARIANTS[params.get("quick")] ? params.get("quick") : "swiss";
      return new PlayPage(root, { kind: "quick", variant: v, players: Number(params.get("players") || 2) });
    }
    if (params.has("daily")) {
      const v = VARIANTS[params.get("daily")] ? params.get("daily") : "swiss";
      return new PlayPage(root, { kind: "daily", variant: v });
    }
    if (params.has("race")) {
      const options = {};
      for (const [field, param, scale] of [["capacity", "capacity", 1], ["countdown_ms", "countdown", 1000],
        ["time_limit_ms", "time_limit", 60000]]) {
        if (params.get(param)) options[field] = Math.round(Number(params.get(param)) * scale);
      }
      if (params.get("winnable") === "1") options.winnable = true;
      if (params.get("rated") === "0") options.rated = false;
      return new PlayPage(root, { kind: "create", variant, options });
    }
    const options = { capacity: 1, countdown_ms: 0 };
    if (params.get("seed")) options.seed = seedValue(params.get("seed"));
    return new PlayPage(root, { kind: "solo", variant, options });
  }

  function room(root, code) {
    return new PlayPage(root, { kind: "room", code });
  }

  return { solo, room, Keep, helloFields, cardName };
})();
