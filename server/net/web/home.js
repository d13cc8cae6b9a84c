// The ways in, on the home page: a solo deal, a race to create (the options of `solitaire race
// create`), a room to join by its code, a quick race, the daily challenge, a challenge for
// friends with your open ones (`solitaire challenge create` and `list`), and the account the
// terminal uses too (register, log in, log out, change the password). Forms go nowhere (the CSP
// has form-action 'none'): each one opens a /play address or sends one message.
"use strict";

window.Home = (() => {
  const { h } = window.Board;
  const Keep = () => window.Play.Keep;

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
    main.replaceChildren(h("h1", {}, "Solitaire Arena"),
      h("p", { class: "lead" }, "Race the same deal as others, from this page or the terminal. ",
        field("Your name", name)),
      h("div", { class: "ways" }, solo, race, join, quick, daily, challenge, account));
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
        draw();
        status.textContent = `Logged in as ${msg.name}.`;
      } else if (msg.type === "logged_out") {
        Keep().setAccount(null, null);
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
