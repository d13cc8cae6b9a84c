// The player's own board, drawn large and played by pointer and keyboard: every card and pile is
// a button (a click, a tap, Enter or Space); a card, then a place, with the selection's legal
// places marked; a double click sends a card to its foundation; drag and drop with a pointer.
// What it plays goes through the page's prompt (play.js), as a typed move does.
"use strict";

window.PlayBoard = (() => {
  const { h, SYMBOL } = window.Board;
  const SUITS = "CDHS";
  const SUIT_NAME = { C: "clubs", D: "diamonds", H: "hearts", S: "spades" };
  const RANK_NAME = {
    A: "ace", 2: "two", 3: "three", 4: "four", 5: "five", 6: "six", 7: "seven",
    8: "eight", 9: "nine", T: "ten", J: "jack", Q: "queen", K: "king",
  };
  const cardName = (c) => `${RANK_NAME[c[0]]} of ${SUIT_NAME[c[1]]}`;

  class MyBoard {
    // `page`: the PlayPage whose game this is (its view, its legal moves, its prompt).
    constructor(page, root) {
      this.page = page;
      this.root = root;
      this.selection = null; // {src, n, key}
    }

    // The moves the selection may make: {destination token: move}.
    targets() {
      const sel = this.selection;
      const out = new Map();
      if (!sel) return out;
      for (const m of this.page.legal()) {
        if (!m.startsWith(sel.src)) continue;
        const rest = m.slice(sel.src.length);
        const hit = /^(t[1-9]|f)(?:x([0-9]+))?$/.exec(rest);
        if (!hit) continue;
        if ((hit[2] ? Number(hit[2]) : 1) !== sel.n) continue;
        out.set(hit[1], m);
      }
      return out;
    }

    draw() {
      const v = this.page.view;
      if (!this.page.live()) this.selection = null; // nothing more to move
      const focused = document.activeElement && this.root.contains(document.activeElement)
        ? document.activeElement.dataset.key : null;
      if (!v) {
        this.root.replaceChildren(h("p", { class: "small" },
          this.page.role === "spectator" ? "" : "Your board appears when the race starts."));
        if (this.page.role === "spectator") this.root.hidden = true;
        return;
      }
      this.root.hidden = false;
      const button = (key, label, attrs, ...children) => h("button",
        { type: "button", class: "spot", "data-key": key, "aria-label": label, "data-label": label, ...attrs },
        ...children);
      const face = (c) => {
        const red = c[1] === "D" || c[1] === "H";
        return h("span", { class: `face ${red ? "red" : "black"}`, "aria-hidden": "true" },
          h("span", { class: "index" }, h("span", { class: "rank" }, c[0] === "T" ? "10" : c[0]),
            h("span", { class: "suit" }, SYMBOL[c[1]])),
          h("span", { class: "pip" }, SYMBOL[c[1]])); // a playing card's: shown on an uncovered card
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
        "data-version": this.page.events.length }, top, body);
      this.root.replaceChildren(board);
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
        if (Number(el.dataset.n) === 1 && this.page.legal().has(move)) {
          this.select(null);
          this.page.play(move, move);
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
      for (const b of this.root.querySelectorAll("button.spot")) {
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
      if (!this.page.live()) {
        this.page.refuse(this.page.view ? "The game is not on." : "The race has not started yet.");
        return;
      }
      if (el.dataset.act === "stock") {
        this.select(null);
        const move = this.page.legal().has("redeal") ? "redeal" : "d";
        this.page.play(move, move);
        return;
      }
      const sel = this.selection;
      const own = (src, n) => [...this.page.legal()].some((m) => m.startsWith(src)
        && (n === 1 ? !/x/.test(m) : m.endsWith(`x${n}`)));
      if (sel) {
        const dst = el.dataset.dst;
        if (el.dataset.src === sel.src && Number(el.dataset.n) === sel.n) {
          this.select(null);
          this.page.say("Selection cleared.");
          return;
        }
        // A legal place: the move. Another card that can move: a new selection. Anything
        // else: the move anyway, so the rules say why it is refused, as at the prompt.
        if (dst && (this.targets().has(dst) || !el.dataset.src || !own(el.dataset.src, Number(el.dataset.n)))) {
          const move = `${sel.src}${dst}` + (sel.n > 1 ? `x${sel.n}` : "");
          this.select(null);
          this.page.play(move, move);
          return;
        }
      }
      if (el.dataset.src) {
        this.select({ src: el.dataset.src, n: Number(el.dataset.n), key: el.dataset.key });
        const n = this.targets().size;
        this.page.say(n ? `Selected ${el.getAttribute("aria-label").split(";")[0]}: ${n} place${n === 1 ? "" : "s"} it may go, highlighted.`
          : `Selected ${el.getAttribute("aria-label")}: it has no legal move now.`);
      }
    }
  }

  return { MyBoard, cardName };
})();
