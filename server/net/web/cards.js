// Playing cards drawn by the page as SVG: a white card with rounded corners, its rank and suit
// in the corner and a large pip in the middle. Drawn with presentation attributes only (the CSP
// allows no inline style); a card standing alone is an image named as the boards name it
// ("ace of spades"), a card beside words that say it is hidden from assistive technology.
"use strict";

window.Cards = (() => {
  const NS = "http://www.w3.org/2000/svg";
  const SYMBOL = { C: "♣", D: "♦", H: "♥", S: "♠" };
  const SUIT_NAME = { C: "clubs", D: "diamonds", H: "hearts", S: "spades" };
  const RANK_NAME = {
    A: "ace", 2: "two", 3: "three", 4: "four", 5: "five", 6: "six", 7: "seven",
    8: "eight", 9: "nine", T: "ten", J: "jack", Q: "queen", K: "king",
  };

  function el(tag, attrs, text) {
    const node = document.createElementNS(NS, tag);
    for (const [key, value] of Object.entries(attrs)) node.setAttribute(key, value);
    if (text !== undefined) node.textContent = text;
    return node;
  }

  function name(code) {
    return `${RANK_NAME[code[0]]} of ${SUIT_NAME[code[1]]}`;
  }

  // The card `code` ("AS", "TH") as an <svg>; `named`: an image with the card's name, else
  // decoration beside words that name it.
  function svg(code, named = true) {
    const red = code[1] === "D" || code[1] === "H";
    const ink = red ? "#b0141c" : "#1b1b1b";
    const rank = code[0] === "T" ? "10" : code[0];
    const card = el("svg", { viewBox: "0 0 50 70", class: `drawn-card ${red ? "red" : "black"}`,
      "data-card": code, focusable: "false" });
    if (named) {
      card.setAttribute("role", "img");
      card.setAttribute("aria-label", name(code));
      card.append(el("title", {}, name(code)));
    } else {
      card.setAttribute("aria-hidden", "true");
    }
    const font = "DejaVu Sans, system-ui, sans-serif";
    card.append(
      el("rect", { x: "1", y: "1", width: "48", height: "68", rx: "5", fill: "#fff", stroke: "#777", "stroke-width": "1.5" }),
      el("text", { x: "5", y: "17", "font-size": "15", "font-weight": "700", fill: ink, "font-family": font }, rank),
      el("text", { x: "5", y: "31", "font-size": "13", fill: ink, "font-family": font }, SYMBOL[code[1]]),
      el("text", { x: "27", y: "56", "font-size": "30", "text-anchor": "middle", fill: ink, "font-family": font },
        SYMBOL[code[1]]),
    );
    return card;
  }

  return { svg, name };
})();
