// Tournaments in the page (docs/protocol.md, "Tournaments"): /tournaments lists the upcoming,
// live and finished ones (and creates one), /tournament/ID follows one: the countdown, join and
// withdraw, the standings page with every sheet and streak, the player's own race opening by
// itself on the same connection (the server seats the follower it pairs) and the standings
// coming back after it, the leaders' race live beside them on a spectator connection of its
// own (a tournament TV), and the podium at the end. Every text from the server goes in as text.
"use strict";

window.Tournament = (() => {
  const { h } = window.Board;
  const Keep = () => window.Play.Keep;
  const VARIANT_NAME = { swiss: "Swiss", quadrennial: "Quadrennial" };
  const STATUS = { upcoming: "upcoming", running: "running", finishing: "last races", finished: "finished" };
  const BACK_TO_STANDINGS_MS = 4000; // a finished race's results stay this long
  const LAST_STRETCH = "No more races: the last stretch. The races still on are played to their end, "
    + "then the standings are final.";
  const OVER = "The tournament is over: the standings are final.";

  function clock(ms) {
    const s = Math.max(0, Math.ceil(ms / 1000));
    const hours = Math.floor(s / 3600);
    const mm = String(Math.floor((s % 3600) / 60)).padStart(hours ? 2 : 1, "0");
    return `${hours ? `${hours}:` : ""}${mm}:${String(s % 60).padStart(2, "0")}`;
  }

  function length(ms) {
    const m = Math.round(ms / 60000);
    if (m < 1) return `${Math.round(ms / 1000)} s`;
    return m < 60 ? `${m} min` : `${Math.floor(m / 60)} h${m % 60 ? ` ${m % 60}` : ""}`;
  }

  // "1 race", "2 races": a count and its noun, in the number it takes.
  function plural(n, word, words = `${word}s`) {
    return `${n} ${n === 1 ? word : words}`;
  }

  // No race is paired from pairing_until on: the last stretch, then the races still on end.
  function lastStretch(t, now) {
    return t.status === "running" && now >= t.pairing_until;
  }

  // Whether a free player may still be paired: before the start, or running before the last stretch.
  function pairing(t, now) {
    return t.status === "upcoming" || (t.status === "running" && !lastStretch(t, now));
  }

  function facts(t) {
    return `${VARIANT_NAME[t.variant] || t.variant} · ${length(t.length_ms)} · races of ${t.race_size}`
      + ` (${clock(t.time_limit_ms)} each) · ${t.rated ? "rated" : "unrated"}`
      + (t.berserk ? " · berserk allowed" : "") + (t.streaks ? " · streaks" : "");
  }

  // When: the countdown to the start, the time left, or how it stands.
  function when(t, now) {
    if (t.status === "upcoming") return `starts in ${clock(t.starts_at - now)}`;
    if (t.status === "running") {
      return `${clock(t.ends_at - now)} left${lastStretch(t, now) ? " · no more races: the last stretch" : ""}`;
    }
    if (t.status === "finishing") return "time is up: the last races are being played";
    return "finished";
  }

  function hello() {
    const key = Keep().key();
    return key ? { key, name: Keep().name() } : { name: Keep().name() };
  }

  // ---- /tournaments ----------------------------------------------------------------------
  function listPage(main) {
    document.title = "Tournaments · Solitaire Arena";
    const bodies = { live: h("tbody"), upcoming: h("tbody"), finished: h("tbody") };
    const cols = ["name", "variant", "length", "players", "when", "winner"];
    const table = (key, caption) => h("table", { class: "tournaments", id: key },
      h("caption", {}, caption),
      h("thead", {}, h("tr", {}, cols.map((c) => h("th", { scope: "col" }, c)))), bodies[key]);
    const status = h("p", { class: "said", role: "status", id: "create-status" });
    let arena = null;
    const createForm = h("form", { id: "create-tournament", "aria-labelledby": "create-title" },
      h("h2", { id: "create-title" }, "Create a tournament"),
      field("Name", h("input", { type: "text", name: "title", maxlength: "64", required: "" })),
      field("Variant", h("select", { name: "variant" }, h("option", { value: "swiss" }, "Swiss"),
        h("option", { value: "quadrennial" }, "Quadrennial"))),
      field("Length (min)", h("input", { type: "number", name: "minutes", min: "1", max: "720", value: "30" })),
      field("Starts in (min)", h("input", { type: "number", name: "starts_in", min: "0", max: "10080", value: "0" })),
      field("Each race (min)", h("input", { type: "number", name: "race", min: "0.5", max: "30", step: "0.5", value: "3" })),
      field("Racers a race", h("select", { name: "size" }, [2, 3, 4].map((n) => h("option", { value: n }, n)))),
      h("label", { class: "check" }, h("input", { type: "checkbox", name: "rated", checked: "" }), " rated"),
      h("label", { class: "check" }, h("input", { type: "checkbox", name: "berserk", checked: "" }), " berserk allowed"),
      h("label", { class: "check" }, h("input", { type: "checkbox", name: "streaks", checked: "" }), " streaks"),
      h("button", { type: "submit" }, "Create"), status);
    createForm.addEventListener("submit", (e) => {
      e.preventDefault();
      const el = createForm.elements;
      const msg = { type: "create_tournament", ref: "create", name: el.title.value.trim(),
        variant: el.variant.value, length_ms: Math.round(Number(el.minutes.value) * 60000),
        time_limit_ms: Math.round(Number(el.race.value) * 60000), race_size: Number(el.size.value),
        rated: el.rated.checked, berserk: el.berserk.checked, streaks: el.streaks.checked };
      if (Number(el.starts_in.value) > 0) msg.starts_at = Math.round(arena.now() + Number(el.starts_in.value) * 60000);
      arena.send(msg);
    });
    const account = Keep().account();
    main.replaceChildren(h("h1", {}, "Tournaments"),
      h("p", { class: "small" }, "Arena tournaments: while one runs, everyone who finishes a race is "
        + "paired into the next with players near their rank. Refreshed every five seconds."),
      table("live", "Live"), table("upcoming", "Upcoming"), table("finished", "Finished"),
      account ? createForm : h("p", { class: "small", id: "create-tournament" },
        "Log in on the ", h("a", { href: "/" }, "home page"), " to create or join a tournament."));
    const row = (t) => h("tr", { "data-tournament": t.id, "data-status": t.status },
      h("td", {}, h("a", { href: `/tournament/${encodeURIComponent(t.id)}` }, t.name)),
      h("td", {}, VARIANT_NAME[t.variant] || t.variant), h("td", {}, length(t.length_ms)),
      h("td", { class: "players" }, t.players), h("td", { class: "when" }, when(t, arena.now())),
      h("td", { class: "winner" }, t.podium && t.podium.length ? t.podium[0].name : "–"));
    const list = () => arena.send({ type: "list_tournaments" });
    arena = new window.Viewer.Arena((msg) => {
      if (msg.type === "welcome") list();
      else if (msg.type === "tournaments") {
        for (const key of ["live", "upcoming", "finished"]) {
          bodies[key].replaceChildren(...(msg[key].length ? msg[key].map(row)
            : [h("tr", {}, h("td", { colspan: cols.length, class: "small" }, "none"))]));
        }
        main.dataset.refreshed = String(Date.now());
      } else if (msg.type === "tournament" && msg.ref === "create") {
        location.assign(`/tournament/${encodeURIComponent(msg.tournament.id)}`);
      } else if (msg.type === "error" && msg.ref === "create") {
        status.textContent = msg.code === "too_many_tournaments"
          ? "You have as many upcoming or running tournaments as one account may."
          : msg.code === "not_logged_in" ? "Log in on the home page first." : `${msg.code}: ${msg.reason}`;
        status.className = "said error";
      }
    }, null, hello);
    setInterval(list, 5000);
  }

  function field(text, input) {
    return h("label", {}, `${text} `, input);
  }

  // ---- /tournament/ID --------------------------------------------------------------------
  class TournamentPage {
    constructor(main, id) {
      this.main = main;
      this.id = id.toLowerCase();
      this.tournament = null;
      this.standings = null;
      this.token = null;
      this.race = null; // the PlayPage of my race, while it is on screen
      this.raceRoom = null;
      this.tv = null; // {arena, view, room}
      document.title = "Tournament · Solitaire Arena";
      this.title = h("h1", { id: "tournament-title" }, "Tournament");
      this.factsLine = h("p", { class: "facts", id: "tournament-facts" });
      this.clockLine = h("p", { class: "tournament-clock", id: "tournament-clock", role: "timer" });
      this.lead = h("p", { class: "lead", id: "tournament-lead", role: "status", "aria-live": "polite" }, "connecting…");
      this.buttons = h("div", { class: "controls", role: "toolbar", "aria-label": "tournament" });
      this.podium = h("section", { id: "podium", "aria-label": "podium", hidden: "" });
      this.raceRoot = h("section", { id: "my-race", "aria-label": "your race", hidden: "" });
      this.raceNote = h("p", { class: "said", id: "race-note" });
      this.raceButtons = h("div", { class: "controls", role: "toolbar", "aria-label": "race" });
      this.racePlay = h("div", { class: "race-play" });
      this.raceRoot.append(this.raceNote, this.raceButtons, this.racePlay);
      this.table = h("tbody");
      this.pager = h("div", { class: "pager", role: "toolbar", "aria-label": "pages" });
      this.sheet = h("p", { class: "sheet-line", id: "my-sheet" });
      this.tvRoot = h("section", { id: "tournament-tv", "aria-label": "the leaders' race", hidden: "" });
      const standings = h("section", { id: "standings", "aria-label": "standings" },
        h("table", { class: "standings" }, h("caption", {}, "Standings"),
          h("thead", {}, h("tr", {}, ["#", "player", "score", "sheet", "rating", "state"]
            .map((c) => h("th", { scope: "col", class: c }, c)))), this.table),
        this.pager, this.sheet);
      main.replaceChildren(this.title, this.factsLine, this.clockLine, this.lead, this.buttons,
        this.podium, this.raceRoot, h("div", { class: "tournament-body" }, standings, this.tvRoot));
      // A race of this tournament left by a reload: its seat is taken back on connecting.
      const seat = Keep().seat();
      if (seat && seat.tournament === this.id) this.raceRoom = seat.room;
      this.arena = new window.Viewer.Arena((msg) => this.handle(msg), this.raceRoom, () => this.hello());
      setInterval(() => this.tick(), 500);
      window.tournamentPage = this; // the page's state, for its tests (tests/web/) to read
    }

    hello() {
      const fields = hello();
      const seat = Keep().seat();
      if (seat && seat.token && this.raceRoom && seat.room === this.raceRoom) fields.resume = seat.token;
      return fields;
    }

    me() {
      return this.standings && this.standings.me ? this.standings.me : null;
    }

    handle(msg) {
      switch (msg.type) {
        case "welcome":
          this.token = msg.token;
          this.account = msg.account;
          if (msg.resumed && msg.room === this.raceRoom) {
            if (!this.race) this.openRace({ room: msg.room, race: null, players: [] });
            this.race.handle(msg);
          } else if (!this.race) {
            this.raceRoom = null;
          }
          this.arena.send({ type: "follow_tournament", tournament: this.id, ref: "follow" });
          return;
        case "tournament":
          if (msg.tournament.id.toLowerCase() !== this.id) return;
          this.tournament = msg.tournament;
          this.draw();
          return;
        case "tournament_standings":
          if (msg.tournament.toLowerCase() !== this.id) return;
          if (this.standings && msg.version < this.standings.version && msg.page === this.standings.page) return;
          this.standings = msg;
          this.draw();
          return;
        case "tournament_joined":
          this.setLead("You are in: you are paired as soon as a race can be made. Stay on this page.");
          return;
        case "tournament_withdrawn":
          this.setLead("Paused: you keep your points and are not paired. Join again to carry on.");
          return;
        case "tournament_paired":
          if (msg.tournament.toLowerCase() === this.id) this.openRace(msg);
          return;
        case "berserked":
          this.berserked(msg);
          if (this.race) this.race.handle(msg);
          return;
        case "error":
          if (["follow", "join-t", "withdraw-t", "berserk", "page"].includes(msg.ref)) {
            this.refused(msg);
            return;
          }
          if (!msg.ref && this.race && this.raceRoom && !this.race.me) {
            this.notSeated(); // paired, then seated too late: the race went on or closed
            return;
          }
          break;
        default:
          break;
      }
      if (this.race) {
        this.race.handle(msg);
        if (msg.type === "joined" && msg.room === this.raceRoom && Keep().seat()) {
          Keep().setSeat({ ...Keep().seat(), tournament: this.id }); // found again after a reload
        }
        if (msg.type === "finished" && this.race.code === this.raceRoom) this.raceOver();
        if (["room", "started", "countdown"].includes(msg.type)) this.drawRaceButtons();
      }
    }

    setLead(text) {
      this.lead.textContent = text;
    }

    refused(msg) {
      const text = msg.code === "not_logged_in" ? "Tournaments are for accounts: log in on the home page first."
        : msg.code === "no_such_tournament" ? `There is no tournament ${this.id}.`
          : msg.code === "tournament_over" ? "This tournament is over: nobody joins it any more."
            : msg.code === "rate_limited" ? "Too many joins and withdrawals: wait a minute."
              : `${msg.code}: ${msg.reason}`;
      this.lead.replaceChildren(h("span", { class: "error", role: "alert" }, text));
    }

    // ---- my race: the play page inside this one, on this connection ----
    openRace(msg) {
      if (this.closeTimer) clearTimeout(this.closeTimer);
      this.raceRoom = msg.room;
      this.racePlay.replaceChildren();
      const others = msg.players.filter((n) => n.toLowerCase() !== String(this.account || "").toLowerCase());
      this.raceNote.textContent = msg.race === null ? `Back in your race, room ${msg.room}.`
        : `Race ${msg.race}: against ${others.join(", ") || "nobody"}, in room ${msg.room}.`;
      this.race = new window.Play.PlayPage(this.racePlay, {
        kind: "tournament", code: msg.room, arena: this.arena, token: this.token,
      });
      this.raceRoot.hidden = false;
      this.raceRoot.dataset.room = msg.room;
      this.closeTv();
      this.drawRaceButtons();
      this.raceRoot.scrollIntoView({ block: "start" });
    }

    drawRaceButtons() {
      const r = this.race && this.race.room;
      const can = this.tournament && this.tournament.berserk && r && ["lobby", "countdown"].includes(r.status)
        && !this.berserkRoom;
      const key = can ? "berserk" : "";
      if (this.raceButtons.dataset.key === key) return;
      this.raceButtons.dataset.key = key;
      if (!can) {
        this.raceButtons.replaceChildren();
        return;
      }
      const b = h("button", { type: "button", "data-act": "berserk" }, "Berserk: halve my clock");
      b.addEventListener("click", () => this.arena.send({ type: "berserk", ref: "berserk" }));
      this.raceButtons.replaceChildren(b);
    }

    berserked(msg) {
      if (!this.race || msg.room !== this.raceRoom) return;
      if (msg.player === this.race.me) {
        this.berserkRoom = msg.room;
        this.raceNote.textContent += " Berserk: your clock is halved; a first place in at least 20 moves earns +1.";
      } else {
        const p = this.race.room && this.race.room.players.find((q) => q.player === msg.player);
        this.raceNote.textContent += ` ${p ? p.name : "A rival"} went berserk.`;
      }
      this.drawRaceButtons();
    }

    notSeated() {
      const room = this.raceRoom;
      this.closeRace();
      this.setLead(`Not seated in race room ${room}: waiting to be paired again.`);
    }

    closeRace() {
      if (this.race && this.race.roomView) this.race.roomView.close();
      this.race = null;
      this.raceRoom = null;
      this.berserkRoom = null;
      this.raceRoot.hidden = true;
      this.racePlay.replaceChildren();
    }

    raceOver() {
      const room = this.raceRoom;
      Keep().setSeat(null);
      this.closeTimer = setTimeout(() => {
        if (this.raceRoom !== room) return; // the next race opened meanwhile
        this.closeRace();
        if (!pairing(this.tournament, this.arena.now()) && this.tournament.status !== "finished") {
          this.setLead(LAST_STRETCH);
        }
        // No `leave`: the server takes a follower out of a finished race when it pairs them,
        // and a late `leave` could land in the next race.
        document.getElementById("standings").scrollIntoView({ block: "start" });
        this.draw();
      }, BACK_TO_STANDINGS_MS);
    }

    // ---- the tournament TV: the best-placed race on, on a spectator connection ----
    leadersRace() {
      if (!this.standings || this.race) return null;
      const rows = this.standings.rows.filter((r) => r.racing);
      return rows.length ? rows[0].racing : null;
    }

    followTv() {
      const room = this.tournament && this.tournament.status !== "finished" ? this.leadersRace() : null;
      if (this.tv && this.tv.room === room) return;
      if (this.tv && this.tv.view && this.tv.view.finished && !room) return; // its results stay
      if (!room) {
        if (this.tv && !(this.tv.view && this.tv.view.finished)) this.closeTv();
        return;
      }
      if (!this.tv) {
        const tv = { room: null, view: null, arena: null };
        tv.arena = new window.Viewer.Arena((msg) => {
          if (msg.type === "welcome" && tv.view) tv.view.join();
          else if (tv.view) tv.view.handle(msg);
        }, room);
        this.tv = tv;
      } else {
        this.tv.arena.send({ type: "leave" });
        if (this.tv.view) this.tv.view.close();
      }
      this.tv.room = room;
      const stage = h("div", { class: "tv-stage" });
      this.tvRoot.replaceChildren(h("h2", {}, "The leaders' race, live"), stage);
      this.tvRoot.hidden = false;
      this.tvRoot.dataset.room = room;
      this.tv.view = new window.Viewer.RoomView(this.tv.arena, room, stage);
      this.tv.view.join();
    }

    closeTv() {
      if (!this.tv) return;
      if (this.tv.view) this.tv.view.close();
      this.tv.arena.send({ type: "leave" });
      this.tv.room = null;
      this.tv.view = null;
      this.tvRoot.hidden = true;
      this.tvRoot.replaceChildren();
    }

    // ---- drawing ----
    tick() {
      const t = this.tournament;
      if (!t) return;
      const now = this.arena.now();
      this.clockLine.textContent = when(t, now);
      const stretch = lastStretch(t, now) || t.status === "finishing";
      if (stretch !== Boolean(this.stretchSaid)) { // said once as it begins
        this.stretchSaid = stretch;
        if (stretch && !this.race) {
          this.setLead(LAST_STRETCH);
        }
        this.drawButtons();
        this.drawStandings();
      }
    }

    draw() {
      const t = this.tournament;
      if (!t) return;
      document.title = `${t.name} · Solitaire Arena`;
      this.title.textContent = t.name;
      this.factsLine.textContent = `${facts(t)} · ${plural(t.players, "player")}`
        + (t.creator ? ` · by ${t.creator}` : "");
      this.main.dataset.status = t.status;
      this.tick();
      this.drawButtons();
      this.drawStandings();
      this.drawPodium();
      this.followTv();
    }

    drawButtons() {
      const t = this.tournament;
      const me = this.me();
      const parts = [];
      const open = pairing(t, this.arena.now()); // over or in the last stretch: nothing to join
      if (open && !Keep().account()) {
        parts.push(h("p", { class: "small" }, "Log in on the ", h("a", { href: "/" }, "home page"), " to join."));
      } else if (open && (!me || !me.active)) {
        parts.push(this.button(me ? "Join again" : "Join", "join", () =>
          this.arena.send({ type: "join_tournament", tournament: this.id, ref: "join-t" })));
      } else if (open) {
        parts.push(this.button("Withdraw", "withdraw", () =>
          this.arena.send({ type: "withdraw_tournament", tournament: this.id, ref: "withdraw-t" })));
      }
      if (this.standings && !this.leadSaid) { // what the page first says, once it knows
        this.leadSaid = true;
        this.setLead(t.status === "finished" ? OVER : !open ? LAST_STRETCH
          : !me ? "Join to be paired while it runs."
            : me.active ? "You are in: you are paired as soon as a race can be made. Stay on this page."
              : "Paused: you keep your points and are not paired. Join again to carry on.");
      }
      const key = parts.map((p) => p.dataset.act || "note").join(",");
      if (this.buttons.dataset.key === key) return;
      this.buttons.dataset.key = key;
      this.buttons.replaceChildren(...parts);
    }

    button(text, act, onClick) {
      const b = h("button", { type: "button", "data-act": act }, text);
      b.addEventListener("click", onClick);
      return b;
    }

    // One result a race, each on its own: a sheet of 2 and 0 reads "2 0", never "20".
    sheetCell(sheet) {
      return h("td", { class: "sheet" }, sheet.flatMap((r, i) => [i ? " " : null, h("span", {
        class: `result${r.doubled ? " doubled" : ""}${r.berserk ? " berserk" : ""}${r.timed_out ? " timed-out" : ""}`,
        title: `${r.place} of ${r.of}${r.doubled ? ", doubled (streak)" : ""}${r.berserk ? ", berserk" : ""}`
          + (r.timed_out ? ", out of time" : ""),
      }, String(r.points), r.timed_out ? h("span", { class: "clock-out", "aria-label": "out of time" }, "⏱") : null)]));
    }

    // Racing, waiting to be paired, paused; once no race will be paired, done.
    row(r, mine) {
      const t = this.tournament;
      const over = t && (t.status === "finished" || t.status === "finishing" || lastStretch(t, this.arena.now()));
      const state = r.racing ? "racing" : over ? "done" : r.active ? "waiting" : "paused";
      return h("tr", { "data-account": r.account, "data-rank": r.rank, class: mine ? "me" : null },
        h("td", { class: "rank" }, r.rank),
        h("td", { class: "name" }, window.Viewer.profileLink(r.name), mine ? h("span", { class: "you" }, " (you)") : null),
        h("td", { class: "score" }, String(r.score),
          r.fire ? h("span", { class: "fire", title: "on a streak: the next first place counts double" }, " ×2") : null),
        this.sheetCell(r.sheet), h("td", { class: "rating" }, r.rating_now ?? r.rating),
        h("td", { class: "state" }, state === "racing"
          ? h("a", { href: `/watch/${encodeURIComponent(r.racing)}` }, "racing") : state));
    }

    drawStandings() {
      const s = this.standings;
      if (!s) return;
      const me = s.me;
      const mine = (r) => me !== null && r.account === me.account;
      const rows = s.rows.map((r) => this.row(r, mine(r)));
      if (me && !s.rows.some(mine)) rows.push(h("tr", { class: "gap" }, h("td", { colspan: 6 }, "…")), this.row(me, true));
      if (!s.rows.length) rows.push(h("tr", {}, h("td", { colspan: 6, class: "small" }, "Nobody has joined yet.")));
      this.table.replaceChildren(...rows);
      this.table.closest("table").dataset.version = String(s.version);
      this.table.closest("table").dataset.final = String(s.final);
      const pages = [];
      if (s.pages > 1) {
        if (s.page > 1) pages.push(this.button("◀ previous", "prev", () => this.page(s.page - 1)));
        pages.push(h("span", {}, ` page ${s.page} of ${s.pages} (${s.players} players) `));
        if (s.page < s.pages) pages.push(this.button("next ▶", "next", () => this.page(s.page + 1)));
      }
      this.pager.replaceChildren(...pages);
      this.sheet.textContent = me
        ? `Your sheet: ${me.sheet.map((r) => r.points).join(" ") || "no race yet"} · ${plural(me.score, "point")}, `
          + `rank ${me.rank}${me.fire ? " · on a streak: your next first place counts double" : ""}.`
        : "";
    }

    page(n) {
      this.arena.send({ type: "follow_tournament", tournament: this.id, page: n, ref: "page" });
    }

    drawPodium() {
      const t = this.tournament;
      if (t.status !== "finished" || !t.podium) {
        this.podium.hidden = true;
        return;
      }
      const medal = ["1st", "2nd", "3rd"];
      this.podium.hidden = false;
      this.podium.replaceChildren(h("h2", {}, "Podium"), h("ol", { class: "podium" }, t.podium.slice(0, 3).map((r, i) =>
        h("li", { class: `step place-${i + 1}`, "data-account": r.account },
          h("span", { class: "medal" }, medal[i]), " ", window.Viewer.profileLink(r.name),
          h("span", { class: "small" }, ` ${plural(r.score, "point")} · ${plural(r.races, "race")}`
            + ` · ${plural(r.wins, "first place")}`)))));
      if (!this.race) this.setLead(OVER);
    }
  }

  function page(main, id) {
    return new TournamentPage(main, id);
  }

  return { listPage, page, clock, length, when, VARIANT_NAME };
})();
