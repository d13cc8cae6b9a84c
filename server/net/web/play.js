// Playing from a link: a solo deal (/play?variant=V&seed=S), a seat in a room (/play/CODE), a
// quick race, the daily challenge or a challenge (/play?challenge=CODE). The terminal client (client/) is the reference: the same
// messages (docs/protocol.md), the same friendly notation (rules.js), the same commands at the
// Move field, and the server alone decides. A seat's resume token stays in this tab's
// sessionStorage and the account key in localStorage: never in a URL or a log.
"use strict";

window.Play = (() => {
  const { h } = window.Board;
  const { gameStatus, suggestionText, VARIANTS } = window.PlayPrompt;
  const DONE = new Set(["won", "over", "resigned", "timed_out"]);

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

  // The page's parts: the board, what it says, the Move field, the buttons; the race beside.
  function layout(page) {
    page.title = h("h1", { class: "play-title" }, "Solitaire");
    page.lead = h("p", { class: "lead", id: "lead" }, "connecting…");
    const boardRoot = h("section", { class: "myboard", "aria-label": "your board", id: "myboard" });
    page.board = new window.PlayBoard.MyBoard(page, boardRoot);
    page.said = h("p", { class: "said", id: "said", role: "status", "aria-live": "polite" });
    page.error = h("p", { class: "error", id: "refused", role: "alert" });
    page.input = h("input", {
      type: "text", id: "move", "aria-label": "Move", autocomplete: "off", autocapitalize: "off",
      spellcheck: "false", enterkeyhint: "send", placeholder: "e.g. 3 5, wf, d, hint",
    });
    const form = h("form", { class: "moveform", id: "moveform" }, page.input,
      h("button", { type: "submit" }, "Play"));
    form.addEventListener("submit", (e) => {
      e.preventDefault();
      const text = page.input.value;
      page.input.value = "";
      page.prompt.typed(text);
    });
    page.buttons = h("div", { class: "controls", role: "toolbar", "aria-label": "game" });
    page.results = h("section", { class: "ratings", id: "ratings", "aria-label": "rating changes" });
    const panelRoot = h("section", { class: "race", id: "race", "aria-label": "race" });
    page.panelRoot = panelRoot;
    page.root.replaceChildren(page.title, page.lead,
      h("div", { class: "play" },
        h("div", { class: "mine" }, boardRoot, page.error, page.said, form, page.buttons),
        h("div", { class: "side" }, panelRoot, page.results)));
    page.root.addEventListener("keydown", (e) => {
      if (e.key === "Escape" && page.board.selection) {
        page.board.select(null);
      }
    });
  }

  // ---- the page --------------------------------------------------------------------------
  class PlayPage {
    constructor(root, how) {
      this.root = root;
      this.how = how; // {kind: "solo"|"room"|"quick"|"daily"|"challenge"|"create", ...}
      this.code = how.code || null;
      this.me = null;
      this.role = null;
      this.events = [];
      this.view = null;
      this.room = null;
      this.finished = null;
      this.prompt = new window.PlayPrompt.Prompt(this);
      this.notes = new window.PlayPrompt.Notes(this);
      this.watching = false;
      this.ratingsAsked = null;
      layout(this);
      // A tournament's race is played on the tournament page's connection, which routes
      // the race's messages here (tournament.js).
      this.token = how.token || null;
      this.arena = how.arena || new window.Viewer.Arena((msg) => this.handle(msg), this.code,
        () => helloFields(() => this.code));
      window.arenaPage = this; // the page's state, for its tests (tests/web/) to read
      // Focus lost while racing goes to the server, which counts it into a rated game's
      // fair-play assessment (docs/protocol.md, `focus_lost`): a hidden tab or another window.
      this.focusSentAt = 0;
      const lost = () => {
        if (!this.live() || Date.now() - this.focusSentAt < 1000) return;
        this.focusSentAt = Date.now(); // a blur and a hidden tab together count once
        this.arena.send({ type: "focus_lost" });
      };
      document.addEventListener("visibilitychange", () => { if (document.hidden) lost(); });
      window.addEventListener("blur", lost);
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
              this.board.draw();
              this.afterEvent();
            } else if (msg.version > this.events.length + 1) {
              this.arena.send({ type: "watch", player: this.me });
            }
          }
          break;
        case "ack": return this.prompt.acked(msg);
        case "reject": return this.prompt.rejected(msg);
        case "suggestion":
          this.say(suggestionText(msg));
          return;
        case "finished":
          this.finished = msg;
          break;
        case "rating_changes": return this.notes.showRatings(msg);
        case "queued":
          this.setLead(`Searching for a ${VARIANTS[msg.variant]} race of ${msg.players}: `
            + `${msg.waiting} waiting, ratings ${msg.range}${msg.rated ? "" : " (guests)"}`
            + (msg.bot_in_ms === null || msg.bot_in_ms === undefined
              ? "…" : `, a bot in ${Math.ceil(msg.bot_in_ms / 1000)} s…`));
          return;
        case "matched":
          this.matchedBots = msg.bots || 0;
          this.setLead(msg.bots
            ? `Nobody was found in time: you race ${msg.bots} bot${msg.bots > 1 ? "s" : ""} (unrated), `
              + `room ${msg.room}. The race starts when you are seated.`
            : `Matched: room ${msg.room}. The race starts when everyone is seated.`);
          this.enter(msg.room);
          return;
        case "daily_started":
          this.setLead(`The daily challenge of ${msg.date} (${VARIANTS[msg.variant]}): `
            + "everyone plays this deal today; its seed is revealed tomorrow.");
          this.daily = msg;
          this.enter(msg.room);
          return;
        case "challenge_started":
          this.setLead(`Challenge ${msg.challenge} (${VARIANTS[msg.variant]}): one attempt. `
            + "The standings come once your game is over; the seed once everyone has played.");
          this.challenge = msg;
          this.enter(msg.room);
          return;
        case "challenge":
          this.notes.showChallenge(msg);
          return;
        case "logged_out":
          Keep.setAccount(null, null);
          return;
        case "error": return this.notes.failed(msg);
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
        if (seat && seat.challenge) this.challenge = seat.challenge; // its standings come after
        this.me = msg.session;
        this.role = "player";
        if (this.code !== msg.room || !this.roomView) this.enter(msg.room);
        for (const [id, p] of this.prompt.pending) this.arena.send({ type: "move", id, move: p.move });
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
      } else if (how.kind === "challenge") {
        this.arena.send({ type: "challenge_play", challenge: how.challenge, ref: "challenge" });
        this.setLead("Starting your attempt…");
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
      this.ratingsAsked = null;
      this.results.replaceChildren();
      this.roomView = new window.Viewer.RoomView(this.arena, code, this.panelRoot, this.me);
      if (this.how.kind !== "tournament") {
        if (location.pathname !== `/play/${code}`) history.replaceState(null, "", `/play/${code}`);
        document.title = `Room ${code} · Solitaire Arena`;
      }
      this.board.draw();
    }

    joined(msg) {
      if (msg.room !== this.code || !this.roomView) this.enter(msg.room);
      this.role = msg.role;
      if (msg.role === "player") {
        this.me = msg.player;
        this.roomView.me = msg.player;
        Keep.setSeat({ room: msg.room, token: this.token || (Keep.seat() || {}).token, player: msg.player,
          challenge: this.challenge || null });
        // A deal alone, and a race against bots made in one click (?start=1), start once seated.
        if ((this.how.kind === "solo" || this.how.start) && msg.ref === "join") this.arena.send({ type: "start" });
      } else {
        this.me = null;
        this.setLead(`Room ${msg.room}: you are watching it.`);
      }
      this.notes.drawButtons();
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
        this.notes.describe();
        this.notes.drawButtons();
      }
      const mine = this.myProgress();
      const race = r.capacity > 1;
      // After one's own game, the others' boards, under the same fairness as any spectator.
      if (race && this.role === "player" && !this.watching
        && (r.status === "finished" || (mine && DONE.has(mine.status)))) {
        this.watching = true;
        this.arena.send({ type: "watch", ref: "watch-others" });
      }
      // A challenge's standings, once one's own attempt is over (the server decides anyway).
      if (this.challenge && r.status === "finished" && this.ratingsAsked !== r.id) {
        this.ratingsAsked = r.id;
        this.arena.send({ type: "challenge_show", challenge: this.challenge.challenge, ref: "challenge-show" });
      }
      if ((this.finished || r.status === "finished") && r.rated && race && this.ratingsAsked !== r.id) {
        this.ratingsAsked = r.id;
        this.arena.send({ type: "race_ratings", room: r.id, ref: "ratings" });
      }
    }

    // ---- my board ----
    refold() {
      this.view = this.events.length ? window.Board.fold(this.events) : null;
      this.board.draw();
      this.afterEvent();
    }

    afterEvent() {
      if (this.room) this.notes.describe();
      this.notes.drawButtons();
      this.prompt.pump();
    }

    // A move clicked or typed: the prompt reads it and sends it in turn.
    play(text, move) {
      this.prompt.play(text, move);
    }

    legal() {
      return this.view && this.live() ? Rules.legalMoves(this.view) : new Set();
    }

    live() {
      const r = this.room;
      return this.role === "player" && r && r.status === "racing" && this.view
        && !gameStatus(this.view, this.myProgress());
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
    if (params.has("challenge")) {
      return new PlayPage(root, { kind: "challenge", challenge: params.get("challenge").trim().toLowerCase() });
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
      if (Number(params.get("bots")) > 0) {
        options.bots = Math.round(Number(params.get("bots")));
        options.bot_level = Math.round(Number(params.get("bot_level") || 3));
      }
      return new PlayPage(root, { kind: "create", variant, options, start: params.get("start") === "1" });
    }
    const options = { capacity: 1, countdown_ms: 0 };
    if (params.get("seed")) options.seed = seedValue(params.get("seed"));
    return new PlayPage(root, { kind: "solo", variant, options });
  }

  function room(root, code) {
    return new PlayPage(root, { kind: "room", code });
  }

  return { solo, room, Keep, PlayPage };
})();
