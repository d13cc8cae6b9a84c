// Playing cards drawn by the page as SVG: a white card with rounded corners, its rank and suit
// in the corner and a large pip in the middle. Drawn with presentation attributes only (the CSP
// allows no inline style); beside the words that say what it opens, so hidden from assistive
// technology (the boards' cards are buttons named "seven of hearts, top of t3").
"use strict";

window.Cards = (() => {
  const NS = "http://www.w3.org/2000/svg";
  const SYMBOL = { C: "♣", D: "♦", H: "♥", S: "♠" };

  function el(tag, attrs, text) {
    const node = document.createElementNS(NS, tag);
    for (const [key, value] of Object.entries(attrs)) node.setAttribute(key, value);
    if (text !== undefined) node.textContent = text;
    return node;
  }

  // The card `code` ("AS", "TH") as an <svg>.
  function svg(code) {
    const red = code[1] === "D" || code[1] === "H";
    const ink = red ? "#b0141c" : "#1b1b1b";
    const rank = code[0] === "T" ? "10" : code[0];
    const card = el("svg", { viewBox: "0 0 50 70", class: `drawn-card ${red ? "red" : "black"}`,
      "data-card": code, focusable: "false", "aria-hidden": "true" });
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

  return { svg };
})();
