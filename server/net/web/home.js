// The home page invites a race: one link each for a quick race of either variant, a race
// against a bot and the daily challenge; what is on now (the live and upcoming tournaments
// counting down, the challenges waiting for you, the race on TV); the account the terminal uses
// too (register, log in, log out, change the password). One click further, the full forms: a
// solo deal, a race to create (the options of `solitaire race create`), a room to join by its
// code, a quick race, the daily challenge, a challenge for friends with your open ones
// (`solitaire challenge create` and `list`). Forms go nowhere (the CSP has form-action 'none'):
// each one opens a /play address or sends one message.
"use strict";

window.Home = (() => {
  const { h } = window.Board;
  const Keep = () => window.Play.Keep;
  const ACCOUNT_CHANGED = "arena-account"; // a login or logout here: the page's connections renew

  const variantSelect = (name) => h("select", { name, "aria-label": "variant" },
    h("option", { value: "swiss" }, "Swiss"), h("option", { value: "quadrennial" }, "Quadrennial"));
  const field = (text, input) => h("label", {}, `${text} `, input);
  const note = (text) => h("p", { class: "note" }, text);

  function go(path, params) {
    const query = new URLSearchParams(Object.entries(params).filter(([, v]) => v !== "" && v !== null));
    location.assign(query.toString() ? `${path}?${query}` : path);
  }

  function form(id, title, parts, onSubmit) {
    const f = h("form", { id, "aria-labelledby": `${id}-title` }, h("h2", { id: `${id}-title` }, title), ...parts);
    f.addEventListener("submit", (e) => {
      e.preventDefault();
      onSubmit(f.elements, f);
    });
    return f;
  }

  function page(main) {
    const name = h("input", { type: "text", name: "name", maxlength: "32", value: Keep().name(), autocomplete: "nickname" });
    name.addEventListener("change", () => Keep().setName(name.value.trim() || "player"));
    const remember = () => Keep().setName(name.value.trim() || "player");
    const solo = form("solo", "Play alone", [field("Variant", variantSelect("variant")),
      field("Seed (optional: the same deal as solitaire play --seed)", h("input", { type: "text", name: "seed", maxlength: "64" })),
      h("button", { type: "submit" }, "Deal")],
    (el) => { remember(); go("/play", { variant: el.variant.value, seed: el.seed.value.trim() }); });
    const race = form("create", "Create a race", [field("Variant", variantSelect("variant")),
      field("Seats", h("input", { type: "number", name: "capacity", min: "2", max: "8", value: "4" })),
      field("Countdown (s)", h("input", { type: "number", name: "countdown", min: "0", max: "60", value: "3" })),
      field("Time limit (min, empty: the server's)", h("input", { type: "number", name: "time_limit", min: "1", max: "120" })),
      h("label", { class: "check" }, h("input", { type: "checkbox", name: "winnable" }), " a winnable deal only"),
      h("label", { class: "check" }, h("input", { type: "checkbox", name: "rated", checked: "" }), " rated"),
      field("Bots (server-side racers; a race with a bot is unrated)",
        h("input", { type: "number", name: "bots", min: "0", max: "7", value: "0" })),
      field("Bot level (1 beginner to 5 strongest)", h("select", { name: "bot_level" },
        [1, 2, 3, 4, 5].map((n) => h("option", n === 3 ? { value: n, selected: "" } : { value: n }, n)))),
      h("button", { type: "submit" }, "Create")],
    (el) => {
      remember();
      go("/play", { race: "1", variant: el.variant.value, capacity: el.capacity.value, countdown: el.countdown.value,
        time_limit: el.time_limit.value, winnable: el.winnable.checked ? "1" : "", rated: el.rated.checked ? "" : "0",
        bots: Number(el.bots.value) > 0 ? el.bots.value : "", bot_level: Number(el.bots.value) > 0 ? el.bot_level.value : "" });
    });
    const join = form("join", "Join by code", [field("Room code", h("input", { type: "text", name: "code", maxlength: "32",
      pattern: "[A-Za-z0-9]+", required: "", autocapitalize: "off" })), h("button", { type: "submit" }, "Join")],
    (el) => { remember(); location.assign(`/play/${encodeURIComponent(el.code.value.trim().toLowerCase())}`); });
    const quick = form("quick", "Quick race", [field("Variant", variantSelect("variant")),
      field("Racers", h("select", { name: "players" }, [2, 3, 4].map((n) => h("option", { value: n }, n)))),
      note("Matched with players near your rating when logged in (rated), with guests otherwise; "
        + "nobody found in a while (20 s by default), you race bots, unrated."),
      h("button", { type: "submit" }, "Find a race")],
    (el) => { remember(); go("/play", { quick: el.variant.value, players: el.players.value }); });
    const daily = form("daily", "Daily challenge", [field("Variant", variantSelect("variant")),
      note("One deal a day for everyone, one attempt each: log in first."),
      h("button", { type: "submit" }, "Play today's deal")],
    (el) => go("/play", { daily: el.variant.value }));
    const account = accountSection();
    const challenge = challengeSection();
    const more = h("details", { id: "more", class: "more" },
      h("summary", {}, "More ways to play: a deal of your own, a race set up your way, a room by "
        + "its code, a challenge for friends"),
      h("div", { class: "ways" }, solo, race, join, quick, daily, challenge));
    main.replaceChildren(h("h1", {}, "Solitaire Arena"),
      h("p", { class: "lead" }, "Race the same deal as others, from this page or the terminal. ",
        field("Your name", name)),
      h("div", { class: "home" }, invitation(remember), h("div", { class: "home-side" }, account)), more);
  }

  // ---- the invitation: a race in one click, and what is on now ----------------------------
  const BOT_LEVEL = 2; // a first race against a bot: a beginner's pace, beatable
  const PAIRINGS = [
    { act: "quick-swiss-2", href: "/play?quick=swiss&players=2", card: "AS", title: "Swiss", detail: "quick race · 2 racers" },
    { act: "quick-swiss-4", href: "/play?quick=swiss&players=4", card: "KS", title: "Swiss", detail: "quick race · 4 racers" },
    { act: "quick-quadrennial-2", href: "/play?quick=quadrennial&players=2", card: "AH", title: "Quadrennial", detail: "quick race · 2 racers" },
    { act: "quick-quadrennial-4", href: "/play?quick=quadrennial&players=4", card: "KH", title: "Quadrennial", detail: "quick race · 4 racers" },
    { act: "bot-swiss", href: `/play?race=1&variant=swiss&capacity=2&countdown=3&bots=1&bot_level=${BOT_LEVEL}&start=1`,
      card: "JC", title: "Race a bot", detail: "Swiss · unrated" },
    { act: "bot-quadrennial", href: `/play?race=1&variant=quadrennial&capacity=2&countdown=3&bots=1&bot_level=${BOT_LEVEL}&start=1`,
      card: "JD", title: "Race a bot", detail: "Quadrennial · unrated" },
  ];
  const DAILY = [
    { act: "daily-swiss", href: "/play?daily=swiss", card: "7C", title: "Daily Swiss", detail: "one deal for everyone today" },
    { act: "daily-quadrennial", href: "/play?daily=quadrennial", card: "7D", title: "Daily Quadrennial", detail: "one deal for everyone today" },
  ];

  // A pairing as one link: a drawn card, the variant, what it is.
  function tile(p, onGo) {
    const a = h("a", { href: p.href, class: "tile", "data-act": p.act }, window.Cards.svg(p.card),
      h("span", { class: "tile-words" }, h("strong", {}, p.title), " ", h("span", { class: "detail" }, p.detail)));
    a.addEventListener("click", onGo);
    return a;
  }

  function invitation(remember) {
    const tiles = (list) => h("div", { class: "tiles" }, list.map((p) => tile(p, remember)));
    const tournaments = h("ul", { class: "home-list", id: "home-tournaments", "aria-label": "live and upcoming tournaments" },
      h("li", { class: "small" }, "…"));
    const waiting = h("ul", { class: "home-list", id: "home-challenges", "aria-label": "challenges waiting for you" });
    const tv = h("p", { id: "home-tv-race" }, "…");
    const guest = () => h("li", { class: "small" }, Keep().account() ? "…" : "Log in to see the challenges waiting for you.");
    const sections = h("div", { class: "invite" },
      h("section", { id: "race-now", "aria-labelledby": "race-now-title" },
        h("h2", { id: "race-now-title" }, "Race now"),
        h("p", { class: "small" }, "One click: matched with players near your rating (rated when logged in), "
          + "or with bots if nobody comes within seconds."), tiles(PAIRINGS)),
      h("section", { id: "home-daily", "aria-labelledby": "home-daily-title" },
        h("h2", { id: "home-daily-title" }, "The daily challenge"),
        h("p", { class: "small" }, "One attempt each, for accounts: log in first."), tiles(DAILY)),
      h("div", { class: "now" }, h("section", { id: "home-tournaments-section", "aria-labelledby": "home-tournaments-title" },
        h("h2", { id: "home-tournaments-title" }, "Tournaments"), tournaments,
        h("p", { class: "small" }, h("a", { href: "/tournaments" }, "All tournaments"), ", and one of your own.")),
      h("section", { id: "home-waiting", "aria-labelledby": "home-waiting-title" },
        h("h2", { id: "home-waiting-title" }, "Your challenges waiting"), waiting),
      h("section", { id: "home-tv", "aria-labelledby": "home-tv-title" },
        h("h2", { id: "home-tv-title" }, "On TV"), tv,
        h("p", { class: "small" }, h("a", { href: "/tv" }, "TV"), ": the best race on, one after another."))));
    let arena = null;
    let listed = [];
    const countdowns = () => {
      for (const li of tournaments.querySelectorAll("li[data-tournament]")) {
        const t = listed.find((x) => x.id === li.dataset.tournament);
        if (t) li.querySelector(".when").textContent = window.Tournament.when(t, arena.now());
      }
    };
    const drawTournaments = (msg) => {
      listed = [...msg.live, ...msg.upcoming];
      tournaments.replaceChildren(...(listed.length ? listed.map((t) => h("li", { "data-tournament": t.id },
        h("a", { href: `/tournament/${encodeURIComponent(t.id)}` }, t.name), " ",
        h("span", { class: "small" }, `${window.Tournament.VARIANT_NAME[t.variant] || t.variant} · `
          + `${t.players} player${t.players === 1 ? "" : "s"} · `), h("span", { class: "when" })))
        : [h("li", { class: "small" }, "None on now or soon.")]));
      countdowns();
    };
    const drawTv = (rooms) => {
      const racing = rooms.filter((r) => r.status === "racing")
        .sort((a, b) => b.spectators - a.spectators || b.players - a.players || b.created_at - a.created_at);
      const r = racing[0];
      tv.replaceChildren(...(r ? [h("a", { href: `/watch/${encodeURIComponent(r.id)}`, class: "watch" },
        `Watch room ${r.id}`), `: ${r.names.join(", ")} racing at ${r.variant}`
        + ` (${r.spectators} watching).`] : ["No race on now."]));
    };
    const drawWaiting = (list) => {
      const open = list.filter((c) => c.status === "open" && c.may_play);
      waiting.replaceChildren(...(open.length ? open.map((c) => h("li", { "data-code": c.code },
        h("a", { href: c.link, class: "play-challenge" }, `Play ${c.code}`),
        ` (${c.variant}) by ${c.creator}, until ${new Date(c.closes_at).toUTCString()}`))
        : [h("li", { class: "small" }, "none")]));
    };
    const ask = () => {
      arena.send({ type: "list_tournaments" });
      arena.send({ type: "list_rooms" });
      if (Keep().account()) arena.send({ type: "challenges", ref: "home-challenges" });
    };
    arena = new window.Viewer.Arena((msg) => {
      if (msg.type === "welcome") ask();
      else if (msg.type === "tournaments") drawTournaments(msg);
      else if (msg.type === "rooms") drawTv(msg.rooms);
      else if (msg.type === "challenge_list" && msg.ref === "home-challenges") drawWaiting(msg.challenges);
    }, null, () => (Keep().key() ? { key: Keep().key() } : {}));
    waiting.replaceChildren(guest());
    document.addEventListener(ACCOUNT_CHANGED, () => {
      waiting.replaceChildren(guest());
      arena.renew(); // asked again as who is now logged in
    });
    setInterval(ask, 5000);
    setInterval(countdowns, 1000);
    return sections;
  }

  // A challenge: one fresh deal that you and those you invite each play once, when you can
  // (`solitaire challenge create`); and your challenges still open (`solitaire challenge list`).
  function challengeSection() {
    const section = h("section", { id: "challenge", "aria-labelledby": "challenge-title" });
    const said = h("p", { class: "said", role: "status", id: "challenge-status" });
    const mine = h("ul", { class: "challenges", "aria-label": "Your open challenges" },
      h("li", {}, "Log in to see yours."));
    let arena = null;
    const create = form("challenge-create", "Challenge friends", [field("Variant", variantSelect("variant")),
      field("Invite (account names, comma-separated; empty: anyone with the link)",
        h("input", { type: "text", name: "to", maxlength: "400", autocapitalize: "off" })),
      field("Days to play it", h("input", { type: "number", name: "window", min: "1", max: "30", value: "7" })),
      note("One fresh deal; each plays it once, when they can; nobody sees the others' games before "
        + "finishing their own. Log in first."),
      h("button", { type: "submit" }, "Create the challenge")],
    (el) => {
      const to = el.to.value.split(",").map((n) => n.trim()).filter(Boolean);
      const msg = { type: "challenge_create", variant: el.variant.value, window_days: Number(el.window.value) || 7,
        ref: "challenge-create" };
      if (to.length) msg.to = to;
      arena.send(msg);
    });
    const playLink = (c, text) => h("a", { href: c.link, class: "play-challenge" }, text);
    const drawMine = (list) => {
      const open = list.filter((c) => c.status === "open");
      mine.replaceChildren(...(open.length ? open.map((c) => h("li", { "data-code": c.code },
        `${c.code} (${c.variant}) by ${c.creator}: ${c.players} of ${c.capacity} played, until `
        + `${new Date(c.closes_at).toUTCString()}. `,
        c.may_play ? playLink(c, "Play it") : playLink(c, "See it")))
        : [h("li", {}, "None open.")]));
    };
    section.append(create, said, h("h3", {}, "Your open challenges"), mine);
    arena = new window.Viewer.Arena((msg) => {
      if (msg.type === "welcome" && msg.account) {
        arena.send({ type: "challenges", ref: "challenges" });
      } else if (msg.type === "welcome") {
        mine.replaceChildren(h("li", {}, "Log in to see yours."));
      } else if (msg.type === "challenge" && msg.ref === "challenge-create") {
        const link = `${location.origin}${msg.link}`;
        said.className = "said";
        said.replaceChildren(`Challenge ${msg.code} created. Share this link: `,
          h("a", { href: link, class: "share" }, link), " ", playLink(msg, "Play it now"));
        arena.send({ type: "challenges", ref: "challenges" });
      } else if (msg.type === "challenge_list") {
        drawMine(msg.challenges);
      } else if (msg.type === "error" && String(msg.ref).startsWith("challenge")) {
        said.className = "said error";
        said.textContent = msg.code === "not_logged_in" ? "Challenges are for accounts: log in first."
          : msg.code === "rate_limited" ? "You have made many challenges lately: wait a while."
            : msg.reason;
      }
    }, null, () => (Keep().key() ? { key: Keep().key() } : {}));
    document.addEventListener(ACCOUNT_CHANGED, () => arena.renew());
    return section;
  }

  // Accounts: the same as the terminal's; the key from register or login stays in this
  // browser's localStorage and logs every page's connection in (hello.key).
  function accountSection() {
    const section = h("section", { id: "account", "aria-labelledby": "account-title" });
    const status = h("p", { class: "said", role: "status", id: "account-status" });
    let arena = null;
    const draw = () => {
      const who = Keep().account();
      const parts = [h("h2", { id: "account-title" }, "Account"), status];
      if (who) {
        parts.push(h("p", {}, "Logged in as ", window.Viewer.profileLink(who), "."),
          form("logout", "Log out", [h("button", { type: "submit" }, "Log out")],
            () => arena.send({ type: "logout", ref: "logout" })),
          form("change", "Change the password", [
            field("Current password", h("input", { type: "password", name: "password", autocomplete: "current-password", required: "" })),
            field("New password (8 or more)", h("input", { type: "password", name: "new_password", minlength: "8", maxlength: "128", autocomplete: "new-password", required: "" })),
            h("button", { type: "submit" }, "Change")],
          (el) => arena.send({ type: "change_password", password: el.password.value, new_password: el.new_password.value, ref: "change" })));
      } else {
        const creds = (id, title, button, auto) => form(id, title, [
          field("Name", h("input", { type: "text", name: "name", maxlength: "32", autocomplete: "username", required: "" })),
          field("Password (8 or more)", h("input", { type: "password", name: "password", minlength: "8", maxlength: "128", autocomplete: auto, required: "" })),
          h("button", { type: "submit" }, button)],
        (el) => arena.send({ type: id, name: el.name.value.trim(), password: el.password.value, ref: id }));
        parts.push(note("A logged-in racer's races are rated; the same account works in the terminal."),
          creds("login", "Log in", "Log in", "current-password"),
          creds("register", "Register", "Register", "new-password"));
      }
      section.replaceChildren(...parts);
    };
    draw();
    arena = new window.Viewer.Arena((msg) => {
      if (msg.type === "account") {
        Keep().setAccount(msg.name, msg.key);
        Keep().setName(msg.name);
        document.dispatchEvent(new Event(ACCOUNT_CHANGED));
        draw();
        status.textContent = `Logged in as ${msg.name}.`;
      } else if (msg.type === "logged_out") {
        Keep().setAccount(null, null);
        document.dispatchEvent(new Event(ACCOUNT_CHANGED));
        draw();
        status.textContent = "Logged out.";
      } else if (msg.type === "password_changed") {
        draw();
        status.textContent = `Password changed; ${msg.revoked} other login${msg.revoked === 1 ? "" : "s"} ended.`;
      } else if (msg.type === "welcome" && Keep().account() && !msg.account) {
        Keep().setAccount(null, null); // the key was revoked meanwhile: a guest now
        draw();
      } else if (msg.type === "error" && ["login", "register", "change", "logout"].includes(msg.ref)) {
        draw();
        status.textContent = msg.code === "bad_credentials" ? "Wrong name or password."
          : msg.code === "name_taken" ? "That name is taken: choose another."
            : msg.code === "rate_limited" ? "Too many attempts: wait a few minutes."
              : `${msg.code}: ${msg.reason}`;
        status.className = "said error";
      }
    }, null, () => (Keep().key() ? { key: Keep().key() } : {}));
    return section;
  }

  return { page };
})();
