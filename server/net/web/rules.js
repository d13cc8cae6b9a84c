// The rules the page needs to read a move: the legal moves of a public board, why a move is
// refused, and the friendly notation of the terminal's prompt. A port of shared/swiss.py,
// shared/quadrennial.py, shared/notation.py and shared/moves.py (parse_move): one grammar, two
// implementations, both run against tests/data/notation_cases.json. The server still decides.
//
// A board is Board.step's: {variant, tableau, reserve, stock (a count), waste, foundations
// (C D H S), redeals, resigned}.
"use strict";

window.Rules = (() => {
  const SUITS = "CDHS";
  const RANKS = "A23456789TJQK";
  const SUIT_NAMES = ["clubs", "diamonds", "hearts", "spades"];
  const SYMBOL = { C: "♣", D: "♦", H: "♥", S: "♠" };
  const ORDER = { swiss: "23456789TJQKA", quadrennial: "A23456789TJQK" };
  const FIRST = { swiss: "a Two", quadrennial: "an Ace" };
  const DECK = [...SUITS].flatMap((s) => [...RANKS].map((r) => r + s));
  const rank = (c) => RANKS.indexOf(c[0]) + 1;
  const red = (c) => c[1] === "D" || c[1] === "H";

  // RULES.md, Swiss, Tableau: b on a when colours differ and b is one rank below a cyclically
  // (Ace on Two, King on Ace), or a is a King and b an Ace; an empty pile takes the Aces.
  function mayGoOn(b, a) {
    if (red(a) === red(b)) return false;
    const ra = rank(a), rb = rank(b);
    return rb === ((((ra - 2) % 13) + 13) % 13) + 1 || (ra === 13 && rb === 1);
  }
  const ACCEPTS = new Map(DECK.map((a) => [a, DECK.filter((b) => mayGoOn(b, a))]));
  ACCEPTS.set(null, DECK.filter((c) => rank(c) === 1));
  const accepts = (top, card) => ACCEPTS.get(top ?? null).includes(card);

  const wanted = (v, s) => {
    const f = v.foundations[s];
    return f.length < 13 ? ORDER[v.variant][f.length] + SUITS[s] : null;
  };
  const total = (v) => v.foundations.reduce((n, f) => n + f.length, 0);
  const top = (pile) => (pile.length ? pile[pile.length - 1] : null);

  function runStart(pile) {
    let k = pile.length - 1;
    while (k > 0 && accepts(pile[k - 1], pile[k])) k -= 1;
    return k > 0 ? k : 0;
  }

  // Every card that may be moved, and from where: a pile's index, "w" or "f" + suit index.
  function movable(v) {
    const from = new Map();
    v.tableau.forEach((pile, i) => {
      for (let k = runStart(pile); k < pile.length; k++) from.set(pile[k], i);
    });
    if (v.waste.length) from.set(top(v.waste), "w");
    v.foundations.forEach((f, s) => {
      if (f.length) from.set(top(f), `f${s}`);
    });
    return from;
  }

  function swissMoves(v) {
    const moves = new Set();
    if (v.resigned || total(v) === 52) return moves;
    if (v.stock) moves.add("d");
    const from = movable(v);
    for (let s = 0; s < 4; s++) {
      const card = wanted(v, s);
      const src = card && from.get(card);
      if (src === "w") moves.add("wf");
      else if (typeof src === "number" && top(v.tableau[src]) === card) moves.add(`t${src + 1}f`);
    }
    v.tableau.forEach((pile, j) => {
      for (const card of ACCEPTS.get(top(pile))) {
        const src = from.get(card);
        if (src === undefined || src === j) continue;
        if (typeof src === "number") {
          const source = v.tableau[src];
          const n = source.length - source.indexOf(card);
          moves.add(`t${src + 1}t${j + 1}` + (n > 1 ? `x${n}` : ""));
        } else if (src === "w") {
          moves.add(`wt${j + 1}`);
        } else {
          moves.add(`f${SUITS[Number(src[1])].toLowerCase()}t${j + 1}`);
        }
      }
    });
    return moves;
  }

  function quadrennialMoves(v) {
    const moves = new Set();
    if (v.resigned) return moves;
    const fits = (card) => card !== null && card !== undefined && wanted(v, SUITS.indexOf(card[1])) === card;
    v.reserve.forEach((card, i) => {
      if (fits(card)) moves.add(`r${i + 1}f`);
    });
    if (v.waste.length && fits(top(v.waste))) moves.add("wf");
    if (v.stock) moves.add("d");
    else if (v.waste.length && v.redeals > 0) moves.add("redeal");
    return moves;
  }

  function legalMoves(v) {
    return v.variant === "swiss" ? swissMoves(v) : quadrennialMoves(v);
  }

  // Python's repr of a string, as the core's messages quote what was typed.
  function repr(text) {
    const quote = text.includes("'") && !text.includes('"') ? '"' : "'";
    let out = "";
    for (const ch of text) {
      if (ch === "\\") out += "\\\\";
      else if (ch === quote) out += `\\${ch}`;
      else if (ch === "\n") out += "\\n";
      else if (ch === "\r") out += "\\r";
      else if (ch === "\t") out += "\\t";
      else out += ch;
    }
    return quote + out + quote;
  }

  class IllegalMove extends Error {}

  const CANONICAL = /^(t[1-9]|r[1-8]|w|f[cdhs])(t[1-9]|f)(?:x([1-9][0-9]*))?$/;

  // shared/notation.py parse_canonical: {src, si, dst, di, n}, or IllegalMove saying why.
  function parseCanonical(move) {
    if (move === "d" || move === "redeal") return { src: move, si: -1, dst: "", di: -1, n: 0 };
    const m = CANONICAL.exec(move);
    if (m === null) {
      throw new IllegalMove(`${repr(move)} is not a move: write d, redeal, or source then `
        + "destination (t1..t9, r1..r8, w, fc/fd/fh/fs to t1..t9 or f), e.g. t3t5, wf, t3t5x4");
    }
    const [, src, dst, count] = m;
    let n = 1;
    if (count !== undefined) {
      n = Number(count);
      if (!(src[0] === "t" && dst[0] === "t")) {
        throw new IllegalMove(`${repr(move)}: only tableau-to-tableau moves take a run length`);
      }
      if (n < 2) {
        throw new IllegalMove(`${repr(move)}: write ${src}${dst} to move one card (x<n> needs n >= 2)`);
      }
    }
    if (src === dst) throw new IllegalMove(`${repr(move)}: source and destination are the same pile`);
    const kind = src[0];
    const si = kind === "w" ? -1 : kind === "f" ? SUITS.indexOf(src[1].toUpperCase()) : Number(src[1]) - 1;
    if (kind === "f" && dst === "f") {
      throw new IllegalMove(`${repr(move)}: a foundation card cannot go to a foundation`);
    }
    return { src: kind, si, dst: dst[0], di: dst === "f" ? -1 : Number(dst[1]) - 1, n };
  }

  function buildOn(v, card) {
    const s = SUITS.indexOf(card[1]);
    const pile = v.foundations[s];
    if (pile.length === 13 || ORDER[v.variant][pile.length] + SUITS[s] !== card) {
      const takes = pile.length < 13 ? ORDER[v.variant][pile.length] + SUITS[s] : "nothing more";
      throw new IllegalMove(`${card} cannot go to its foundation, which takes ${pile.length ? takes : FIRST[v.variant]}`);
    }
  }

  // Why the rules refuse a move that is not legal (shared/swiss.py and quadrennial.py apply).
  function swissRefusal(v, m) {
    if (v.resigned) throw new IllegalMove("the game is over: the player resigned");
    if (total(v) === 52) throw new IllegalMove("the game is over: it is won");
    if (m.src === "d") throw new IllegalMove("the stock is empty, and Swiss allows one pass only");
    if (m.src === "redeal") throw new IllegalMove("Swiss has no redeal: the stock goes through once");
    if (m.src === "r") throw new IllegalMove("Swiss has no reserve piles (r1..r8 are Quadrennial)");
    let card;
    if (m.src === "t") {
      const pile = v.tableau[m.si];
      if (pile.length < m.n) {
        const where = pile.length ? `holds ${pile.length} card(s)` : "is empty";
        throw new IllegalMove(`t${m.si + 1} ${where}: cannot move ${m.n} card(s) from it`);
      }
      for (let k = pile.length - m.n + 1; k < pile.length; k++) {
        if (!accepts(pile[k - 1], pile[k])) {
          throw new IllegalMove(`the top ${m.n} cards of t${m.si + 1} are not a run: `
            + `${pile[k]} cannot lie on ${pile[k - 1]}`);
        }
      }
      card = pile[pile.length - m.n];
    } else if (m.src === "w") {
      if (!v.waste.length) throw new IllegalMove("the waste is empty");
      card = top(v.waste);
    } else {
      if (!v.foundations[m.si].length) throw new IllegalMove(`the ${SUIT_NAMES[m.si]} foundation is empty`);
      card = top(v.foundations[m.si]);
    }
    if (m.dst === "f") {
      buildOn(v, card);
    } else {
      const onto = top(v.tableau[m.di]);
      if (!accepts(onto, card)) {
        const why = onto === null
          ? "an empty pile takes only an Ace or a run headed by an Ace"
          : "it needs the opposite colour and one rank lower (or an Ace on a King)";
        throw new IllegalMove(`${card} cannot go on ${onto === null ? "an empty pile" : onto} on t${m.di + 1}: ${why}`);
      }
    }
  }

  function quadrennialRefusal(v, m) {
    if (v.resigned) throw new IllegalMove("the game is over: the player resigned");
    if (m.src === "d") {
      const more = v.waste.length && v.redeals ? "redeal" : "no redeal is left";
      throw new IllegalMove(`the stock is empty (${more})`);
    }
    if (m.src === "redeal") {
      if (v.stock) throw new IllegalMove("redeal only when the stock is empty");
      if (!v.waste.length) throw new IllegalMove("nothing to redeal: the waste is empty");
      throw new IllegalMove("no redeal left: Quadrennial allows two (three passes in all)");
    }
    if (m.src === "t" || m.src === "f") {
      const what = m.src === "t" ? "tableau piles" : "moves off the foundations";
      throw new IllegalMove(`Quadrennial has no ${what}: cards go from r1..r8 or w to f`);
    }
    if (m.dst !== "f") throw new IllegalMove("in Quadrennial cards go only to the foundations");
    let card;
    if (m.src === "w") {
      if (!v.waste.length) throw new IllegalMove("the waste is empty");
      card = top(v.waste);
    } else {
      card = v.reserve[m.si];
      if (!card) throw new IllegalMove(`r${m.si + 1} is empty`);
    }
    buildOn(v, card);
  }

  // The reason a canonical move is refused here (IllegalMove), or nothing when it is legal.
  function refusal(v, move) {
    if (legalMoves(v).has(move)) return;
    const m = parseCanonical(move);
    if (v.variant === "swiss") swissRefusal(v, m);
    else quadrennialRefusal(v, m);
    throw new IllegalMove(`${move} is not legal here`);
  }

  const TOKEN = /x[0-9]+|t?[1-9]|r[1-8]|w|f[cdhs]|f(?:ound(?:ation)?s?)?/y;
  const WORDS = { d: "d", deal: "d", draw: "d", stock: "d", redeal: "redeal", turn: "redeal" };

  function tokens(text) {
    const compact = text.replace(/[\s,>-]+|\bto\b/g, "");
    const out = [];
    let pos = 0;
    while (pos < compact.length) {
      TOKEN.lastIndex = pos;
      const m = TOKEN.exec(compact);
      if (m === null) return null;
      out.push(m[0]);
      pos = TOKEN.lastIndex;
    }
    return out;
  }

  const runLength = (m) => (m.includes("x") ? Number(m.split("x")[1]) : 1);

  // shared/moves.py parse_move: one canonical move from friendly input, or IllegalMove.
  function parseMove(text, v) {
    const legal = legalMoves(v);
    const resolve = (move) => {
      if (legal.has(move)) return move;
      try {
        refusal(v, move);
      } catch (e) {
        if (e instanceof IllegalMove) throw new IllegalMove(`${move}: ${e.message}`);
        throw e;
      }
      throw new IllegalMove(`${move} is not legal here`);
    };
    if (typeof text !== "string" || !text.trim()) throw new IllegalMove("no move given");
    const lowered = text.trim().toLowerCase().split(/\s+/).join(" ");
    if (Object.hasOwn(WORDS, lowered)) return resolve(WORDS[lowered]);
    if (legal.has(lowered)) return lowered;
    const toks = tokens(lowered);
    let count = null;
    if (toks && toks.length && toks[toks.length - 1].startsWith("x")) count = Number(toks.pop().slice(1));
    if (!toks || !toks.length || toks.length > 2 || toks.some((t) => t.startsWith("x"))) {
      throw new IllegalMove(`cannot read ${repr(text)} as a move: try e.g. '3 5', 't3 t5', 'w f', '3f', 'd'`);
    }
    const digitPile = v.variant === "quadrennial" ? "r" : "t";
    const piles = toks.map((t) => (/^[0-9]+$/.test(t) ? digitPile + t : t));
    if (piles.length === 1) {
      if (v.variant === "quadrennial" && "rw".includes(piles[0][0])) piles.push("f");
      else throw new IllegalMove(`${repr(text)}: say where to, e.g. '${toks[0]} 5' or '${toks[0]} f'`);
    }
    let [src, dst] = piles;
    if (src.startsWith("f") && src.length !== 2) {
      throw new IllegalMove(`${repr(text)}: name the foundation to take from: fc, fd, fh or fs`);
    }
    if (dst.startsWith("f")) dst = "f";
    if (count !== null) return resolve(`${src}${dst}` + (count > 1 ? `x${count}` : ""));
    if (src[0] === "t" && dst[0] === "t") {
      const prefix = src + dst;
      const fits = [...legal].filter((m) => m === prefix || m.startsWith(`${prefix}x`))
        .sort((a, b) => runLength(a) - runLength(b));
      if (fits.length > 1) {
        throw new IllegalMove(`${fits.length} runs fit: ${fits.join(" or ")}; say which (e.g. ${fits[fits.length - 1]})`);
      }
      if (fits.length) return fits[0];
      if (v.variant === "swiss") explainNoRun(v, Number(src[1]) - 1, Number(dst[1]) - 1);
    }
    return resolve(src + dst);
  }

  function explainNoRun(v, i, j) {
    const pile = v.tableau[i], target = v.tableau[j];
    if (!pile.length) throw new IllegalMove(`t${i + 1} is empty`);
    const onto = top(target);
    const takes = ACCEPTS.get(onto).slice().sort((a, b) => SUITS.indexOf(a[1]) - SUITS.indexOf(b[1]));
    const where = onto ? `${onto} on t${j + 1}` : `empty t${j + 1}`;
    const wants = onto === null ? "an Ace" : takes.join(" or ");
    const run = pile.slice(runStart(pile));
    const cards = run.join(" ");
    const what = run.length > 1 ? `the run ${cards} on t${i + 1}` : `${cards} from t${i + 1}`;
    throw new IllegalMove(`nothing of ${what} fits on ${where}, which takes ${wants}`);
  }

  // client/text.py cards_as_shown: card codes in a sentence as the board shows them.
  const cardText = (c) => (c[0] === "T" ? "10" : c[0]) + SYMBOL[c[1]];
  function cardsAsShown(text) {
    return text.replace(/(?<![A-Za-z0-9])([A2-9TJQK])([CDHS])(?![A-Za-z0-9])/g, (_, r, s) => cardText(r + s));
  }

  // client/play.py reason_text: a refusal as a player reads it, the typed text once.
  function reasonText(text, move, reason) {
    const m = /^'?([a-z0-9 ]{1,16})'?: /.exec(reason);
    if (m && [text, move, text.toLowerCase()].includes(m[1])) reason = reason.slice(m[0].length);
    return `${text}: ${cardsAsShown(reason)}`;
  }

  // client/commands.py BARE_F_HINTS: a bare foundation with no pile, and what to type instead.
  const BARE_F = {
    swiss: "'f' alone is not a move: 3f puts t3's top card on its foundation, wf the waste's, "
      + "and fst2 takes the spades foundation's top card back onto t2.",
    quadrennial: "'f' alone is not a move: 5f (or 5) puts r5's card on its foundation, wf the "
      + "waste's top card.",
  };

  return {
    legalMoves, parseMove, parseCanonical, refusal, IllegalMove, runStart, accepts,
    cardsAsShown, reasonText, BARE_F, cardText,
  };
})();
