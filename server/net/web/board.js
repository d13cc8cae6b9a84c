// The board of one game: the public fold of docs/protocol.md ("Games") and its drawing.
// A port of shared/views.py's public_fold for events the server already checked: the board is
// rebuilt from the public events alone, so nothing of the stock's order can be on the page.
"use strict";

window.Board = (() => {
  const SUITS = "CDHS";
  const SYMBOL = { C: "♣", D: "♦", H: "♥", S: "♠" };
  const SUIT_NAME = { C: "clubs", D: "diamonds", H: "hearts", S: "spades" };
  const RANK_NAME = {
    A: "ace", 2: "two", 3: "three", 4: "four", 5: "five", 6: "six", 7: "seven",
    8: "eight", 9: "nine", T: "ten", J: "jack", Q: "queen", K: "king",
  };
  const MOVE = /^(t[1-9]|r[1-8]|w|f[cdhs])(t[1-9]|f)(?:x([0-9]+))?$/;

  function start(ev) {
    return {
      variant: ev.variant,
      tableau: ev.layout.tableau.map((pile) => pile.slice()),
      reserve: ev.layout.reserve.slice(),
      stock: ev.stock_count,
      waste: [],
      foundations: [[], [], [], []],
      redeals: ev.variant === "quadrennial" ? 2 : 0,
      moves: 0,
      resigned: false,
      abandoned: false,
    };
  }

  function copy(v) {
    return {
      ...v,
      tableau: v.tableau.map((p) => p.slice()),
      reserve: v.reserve.slice(),
      waste: v.waste.slice(),
      foundations: v.foundations.map((f) => f.slice()),
    };
  }

  // The board after one more public event (null before game_started).
  function step(view, ev) {
    if (ev.type === "game_started") return start(ev);
    if (view === null) throw new Error("a game starts with game_started");
    const v = copy(view);
    if (ev.type === "resigned") {
      v.resigned = true;
      v.abandoned = ev.reason === "abandoned";
      return v;
    }
    const revealed = (ev.revealed || []).slice();
    const move = ev.move;
    v.moves += 1;
    if (move === "d") {
      v.stock -= 1;
      v.waste.push(revealed.shift());
    } else if (move === "redeal") {
      v.stock = v.waste.length;
      v.waste = [];
      v.redeals -= 1;
    } else {
      const m = MOVE.exec(move);
      if (m === null) throw new Error(`not a move: ${move}`);
      const [, src, dst, count] = m;
      const n = count ? Number(count) : 1;
      let cards;
      if (src[0] === "t") {
        const pile = v.tableau[Number(src[1]) - 1];
        cards = pile.splice(pile.length - n, n);
      } else if (src[0] === "r") {
        cards = [v.reserve[Number(src[1]) - 1]];
        v.reserve[Number(src[1]) - 1] = null;
      } else if (src === "w") {
        cards = [v.waste.pop()];
      } else {
        cards = [v.foundations[SUITS.indexOf(src[1].toUpperCase())].pop()];
      }
      if (dst === "f") v.foundations[SUITS.indexOf(cards[0][1])].push(cards[0]);
      else v.tableau[Number(dst[1]) - 1].push(...cards);
    }
    // Quadrennial's standing refill: the cards the move turned up fill r1..r8's gaps in order.
    for (let i = 0; i < v.reserve.length && revealed.length; i++) {
      if (v.reserve[i] === null) {
        v.reserve[i] = revealed.shift();
        v.stock -= 1;
      }
    }
    return v;
  }

  function fold(events) {
    return events.reduce(step, null);
  }

  function foundationCount(v) {
    return v.foundations.reduce((n, f) => n + f.length, 0);
  }

  // A DOM element: h("li", {class: "card"}, child...). Text always goes in as text.
  function h(tag, attrs, ...children) {
    const el = document.createElement(tag);
    for (const [key, value] of Object.entries(attrs || {})) {
      if (value !== null && value !== undefined && value !== false) el.setAttribute(key, value);
    }
    for (const child of children.flat()) {
      if (child === null || child === undefined || child === false) continue;
      el.append(child instanceof Node ? child : document.createTextNode(String(child)));
    }
    return el;
  }

  function cardText(card) {
    return (card[0] === "T" ? "10" : card[0]) + SYMBOL[card[1]];
  }

  // A card by its name ("seven of hearts") to assistive technology, by rank and suit symbol
  // on screen: the colour only repeats what the symbol says.
  function card(code, tag = "span") {
    if (!code) return h(tag, { class: "card none", "aria-label": "none" }, "--");
    const red = code[1] === "D" || code[1] === "H";
    const name = `${RANK_NAME[code[0]]} of ${SUIT_NAME[code[1]]}`;
    return h(
      tag,
      {
        class: red ? "card red" : "card black",
        "data-card": code,
        title: name,
        "aria-label": name,
        role: tag === "span" ? "img" : null,
      },
      cardText(code),
    );
  }

  // The board as a DOM subtree: stock (a count only), waste, foundations, then the tableau
  // columns (Swiss, each bottom to top) or the eight reserve cards (Quadrennial).
  function render(v) {
    const top = h("div", { class: "row" });
    top.append(
      h("div", { class: "pile stock", "data-pile": "stock", "data-count": v.stock },
        h("span", { class: "label" }, "stock"), ` ${v.stock}`),
      h("div", { class: "pile waste", "data-pile": "waste", "data-count": v.waste.length },
        h("span", { class: "label" }, "waste"), " ", card(v.waste[v.waste.length - 1]),
        h("span", { class: "small" }, ` (${v.waste.length})`)),
    );
    if (v.variant === "quadrennial") {
      top.append(h("div", { class: "pile redeals" }, h("span", { class: "label" }, "redeals"),
        ` ${v.redeals}`));
    }
    const found = h("div", { class: "row foundations", "aria-label": "foundations" });
    [...SUITS].forEach((s, i) => {
      const f = v.foundations[i];
      found.append(h("div", {
        class: "pile foundation", "data-pile": `f${s.toLowerCase()}`, "data-count": f.length,
        title: `${SUIT_NAME[s]} foundation: ${f.length} cards`,
      }, h("span", { class: "label" }, SYMBOL[s]), " ", card(f[f.length - 1])));
    });
    found.append(h("span", { class: "count" }, `${foundationCount(v)}/52`));
    const body = h("div", { class: v.variant === "swiss" ? "tableau" : "reserve" });
    if (v.variant === "swiss") {
      v.tableau.forEach((pile, i) => {
        body.append(h("ol", { class: "pile column", "data-pile": `t${i + 1}`,
          "aria-label": `t${i + 1}, bottom to top` },
        h("li", { class: "label" }, `t${i + 1}`),
        pile.length ? pile.map((c) => card(c, "li")) : card(null, "li")));
      });
    } else {
      v.reserve.forEach((c, i) => {
        body.append(h("div", { class: "pile slot", "data-pile": `r${i + 1}` },
          h("span", { class: "label" }, `r${i + 1}`), card(c)));
      });
    }
    return h("div", { class: "cards", "data-moves": v.moves }, top, found, body);
  }

  return { step, fold, render, h, card, cardText, foundationCount, SYMBOL };
})();
