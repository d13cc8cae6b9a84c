// The referee in the browser (docs/operations.md, "Moderation"): a Report button for any
// logged-in player, and /mod for moderators: the queue (reports and automatic fair-play flags),
// an account (its reports, its fair-play level and assessed games), the log, and the actions,
// each confirmed before it is sent. Everything goes over this page's own WebSocket, which the
// server checks for its Origin; the account key stays in localStorage and no browser sends it by
// itself, so another site cannot act as a moderator (no cookie to ride on).
window.Mod = (() => {
  const { h } = window.Board;
  const Keep = () => window.Play.Keep;
  const keyed = () => (Keep().key() ? { key: Keep().key() } : {});
  const REASONS = { cheat: "cheating", name: "a name that breaks the rules", abuse: "abuse", other: "something else" };
  const ACTIONS = { mark: "Fair-play mark", unmark: "Take the mark back", close: "Close the account", reopen: "Reopen the account", rename: "Rename the account" };

  function refusal(msg) {
    if (msg.code === "not_logged_in") return "Log in on the home page first.";
    if (msg.code === "not_moderator") return "Moderators only: this account holds no moderator role.";
    return `${msg.code}: ${msg.reason}`;
  }

  // A connection logged in with this browser's key, opened on first use: `ask` sends a request
  // (once the welcome is in) and hands its answer, or its error, to `onAnswer`.
  function connection() {
    let arena = null;
    let welcomed = false;
    let count = 0;
    const waiting = [];
    const pending = new Map();
    const ask = (request, answer, onAnswer) => {
      const ref = `r${++count}`;
      pending.set(ref, { answer, onAnswer });
      if (welcomed) arena.send({ ...request, ref });
      else waiting.push({ ...request, ref });
      if (arena) return;
      arena = new window.Viewer.Arena((msg) => {
        if (msg.type === "welcome") {
          welcomed = true;
          waiting.splice(0).forEach((one) => arena.send(one));
        }
        const asked = pending.get(msg.ref);
        if (!asked || (msg.type !== asked.answer && msg.type !== "error")) return;
        pending.delete(msg.ref);
        asked.onAnswer(msg);
      }, null, keyed);
    };
    return ask;
  }

  // A Report button for `name` (and the race it was seen in, if any), opening a small form.
  function reportButton(name, race = null) {
    const ask = connection();
    const status = h("span", { class: "small report-status", role: "status" }, "");
    const reason = h("select", { "aria-label": `Why report ${name}` },
      Object.entries(REASONS).map(([value, text]) => h("option", { value }, text)));
    const note = h("input", { type: "text", maxlength: "500", "aria-label": "What you saw", placeholder: "what you saw" });
    const send = h("button", { type: "button", class: "send-report" }, "Send report");
    const form = h("span", { class: "report-form", hidden: "" }, reason, " ", note, " ", send);
    const open = h("button", { type: "button", class: "report", "aria-expanded": "false" }, `Report ${name}`);
    open.addEventListener("click", () => {
      form.hidden = !form.hidden;
      open.setAttribute("aria-expanded", String(!form.hidden));
      if (!form.hidden) reason.focus();
    });
    send.addEventListener("click", () => {
      const request = { type: "report", name, reason: reason.value };
      if (race) request.race = race;
      if (note.value.trim()) request.note = note.value.trim();
      send.disabled = true;
      ask(request, "report_filed", (msg) => {
        send.disabled = false;
        if (msg.type === "error") {
          status.textContent = refusal(msg);
          status.className = "error report-status";
          return;
        }
        form.hidden = true;
        open.setAttribute("aria-expanded", "false");
        status.textContent = `Reported ${msg.name}: a moderator will look.`;
        status.className = "small report-status";
      });
    });
    return h("span", { class: "reporting" }, open, " ", form, " ", status);
  }

  function when(at) {
    return new Date(at).toISOString().slice(0, 16).replace("T", " ");
  }

  // /mod: the queue and the log, an account shown with its reports, and its actions confirmed.
  function page(main) {
    const ask = connection();
    document.title = "Moderation · Solitaire Arena";
    const status = h("p", { role: "status", class: "small" }, "loading…");
    const queue = h("tbody");
    const log = h("tbody");
    const shown = h("section", { id: "account", "aria-label": "account" });
    main.replaceChildren(h("h1", {}, "Moderation"), status,
      h("table", { id: "queue" }, h("caption", {}, "Waiting for a moderator"),
        h("thead", {}, h("tr", {}, ["name", "reports", "reasons", "latest", "fair play", ""].map((c) => h("th", { scope: "col" }, c)))), queue),
      shown,
      h("table", { id: "log" }, h("caption", {}, "Moderators' actions, newest first"),
        h("thead", {}, h("tr", {}, ["when", "moderator", "action", "account", "why"].map((c) => h("th", { scope: "col" }, c)))), log));

    const refresh = () => {
      ask({ type: "mod_queue" }, "mod_queue_rows", (msg) => {
        if (msg.type === "error") {
          status.textContent = refusal(msg);
          status.className = "error";
          status.setAttribute("role", "alert");
          return;
        }
        status.textContent = "";
        queue.replaceChildren(...(msg.rows.length ? msg.rows.map((r) => {
          const look = h("button", { type: "button", class: "show" }, `Show ${r.name}`);
          look.addEventListener("click", () => show(r.name));
          const reasons = Object.entries(r.reasons).map(([k, n]) => `${n} ${k}`).join(", ");
          const latest = r.latest ? `${when(r.latest.at)} ${r.latest.note || ""}` : "";
          return h("tr", { "data-account": r.account, ...(r.flag ? { "data-level": r.flag.level } : {}) },
            h("td", {}, window.Viewer.profileLink(r.name)), h("td", {}, String(r.reports)),
            h("td", {}, reasons), h("td", { class: "small" }, latest),
            h("td", { class: "small flag" }, r.flag ? r.flag.evidence : ""),
            h("td", {}, look));
        }) : [h("tr", { class: "none" }, h("td", { colspan: 6, class: "small" }, "none"))]));
        main.dataset.refreshed = String(Date.now());
      });
      ask({ type: "mod_log" }, "mod_log_rows", (msg) => {
        if (msg.type === "error") return;
        log.replaceChildren(...(msg.rows.length ? msg.rows.map((r) => h("tr", { "data-action": r.action },
          h("td", {}, when(r.at)), h("td", {}, r.moderator), h("td", {}, r.action),
          h("td", {}, r.new_name ? `${r.name} → ${r.new_name}` : r.name), h("td", {}, r.why)))
          : [h("tr", { class: "none" }, h("td", { colspan: 5, class: "small" }, "none"))]));
      });
    };

    function show(name, said = "") {
      ask({ type: "mod_show", name }, "mod_account", (msg) => {
        if (msg.type === "error") {
          shown.replaceChildren(h("p", { class: "error" }, refusal(msg)));
          return;
        }
        const held = [msg.marked ? "marked" : null, msg.closed ? "closed" : null].filter(Boolean);
        const why = h("input", { type: "text", maxlength: "500", "aria-label": "Why (for the log)", placeholder: "why (for the log)" });
        const answer = h("p", { role: "status", class: "small" }, said);
        const actions = [msg.marked ? "unmark" : "mark", msg.closed ? "reopen" : "close"].map((action) => {
          const button = h("button", { type: "button", "data-action": action }, ACTIONS[action]);
          button.addEventListener("click", () => confirm(action, msg.name, why, answer, (done) => show(name, done)));
          return button;
        });
        // A rename names the new name too; the account is shown again under it once done.
        const newName = h("input", { type: "text", maxlength: "32", class: "new-name", "aria-label": "New name", placeholder: "new name" });
        const rename = h("button", { type: "button", "data-action": "rename" }, ACTIONS.rename);
        rename.addEventListener("click", () => confirm("rename", msg.name, why, answer,
          (done, renamed) => show(renamed || name, done), newName));
        shown.replaceChildren(
          h("h2", {}, `${msg.name}: ${held.length ? held.join(", ") : "no mark, open"}`),
          h("ul", { class: "reports" }, msg.reports.length ? msg.reports.map((r) =>
            h("li", {}, `${when(r.at)} ${r.reason} by ${r.reporter}${r.race ? ` in race ${r.race}` : ""}${r.note ? `: ${r.note}` : ""}`))
            : h("li", { class: "small" }, "no reports")),
          h("p", {}, why, " ", ...actions), h("p", {}, newName, " ", rename), answer,
          assessment(msg));
        if (!said) why.focus();
      });
    }

    // The account's fair-play level with its reasons, then its assessed games, newest first.
    function assessment(msg) {
      const a = msg.assessment;
      if (!a || !a.games) return h("p", { class: "small fairplay" }, "Fair play: no rated game assessed yet.");
      const head = ["when", "room", "kind", "game", "deal", "deck known", "moves", "think", "spread", "timing", "focus lost"];
      return h("section", { class: "fairplay", "data-level": a.level, "aria-label": "fair play" },
        h("h3", {}, `Fair play: ${a.level} (${a.games} games, ${a.points} points)`),
        h("ul", { class: "reasons" }, a.reasons.length ? a.reasons.map((r) => h("li", {}, r))
          : h("li", { class: "small" }, "nothing stands out")),
        h("table", { class: "assessed" },
          h("thead", {}, h("tr", {}, head.map((c) => h("th", { scope: "col" }, c)))),
          h("tbody", {}, msg.games.map((g) => h("tr", { "data-room": g.room },
            h("td", {}, when(g.at)), h("td", {}, g.room), h("td", {}, g.kind),
            h("td", {}, g.won ? "won" : "lost"), h("td", {}, g.deal), h("td", {}, g.known), h("td", {}, String(g.moves)),
            h("td", {}, `${(g.think_mean_ms / 1000).toFixed(1)} s`), h("td", {}, g.think_spread.toFixed(2)),
            h("td", {}, g.time_difficulty === null ? "–" : g.time_difficulty.toFixed(2)),
            h("td", {}, String(g.focus_lost)))))));
    }

    // Every action is confirmed: the first click says what will happen, the second does it.
    function confirm(action, name, why, answer, after, newName = null) {
      if (!why.value.trim()) {
        answer.textContent = "Say why first: every action is kept in the log with its reason.";
        answer.className = "error";
        why.focus();
        return;
      }
      const renamed = newName ? newName.value.trim() : "";
      if (newName && !renamed) {
        answer.textContent = "Name the new name first.";
        answer.className = "error";
        newName.focus();
        return;
      }
      const what = newName ? `rename ${name} to ${renamed}` : `${ACTIONS[action].toLowerCase()} of ${name}`;
      const yes = h("button", { type: "button", class: "confirm" }, `Confirm: ${what}`);
      const no = h("button", { type: "button", class: "cancel" }, "Cancel");
      answer.replaceChildren(yes, " ", no);
      answer.className = "small";
      no.addEventListener("click", () => answer.replaceChildren());
      yes.addEventListener("click", () => {
        yes.disabled = true;
        const request = { type: "mod_action", action, name, reason: why.value.trim() };
        if (newName) request.new_name = renamed;
        ask(request, "mod_done", (msg) => {
          if (msg.type === "error") {
            answer.textContent = refusal(msg);
            answer.className = "error";
            return;
          }
          refresh();
          const to = msg.new_name ? ` to ${msg.new_name}` : "";
          after(`Done: ${msg.moderator} ${msg.action} ${msg.name}${to}.`, msg.new_name);
        });
      });
      yes.focus();
    }

    refresh();
  }

  return { page, reportButton };
})();
