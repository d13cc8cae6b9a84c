// Anyone can check a race was fair (docs/protocol.md, "Fairness"): shared/verification.py
// ported for the page. The commitment published before the race is checked against the seed
// and salt its end revealed, every racer's deal against the deck that seed deals
// (docs/deals.md), and every card a move turned up against that deck's stock, in order.
// SHA-256 is written out here: the deal needs it synchronously, and crypto.subtle exists only
// on https:// and localhost pages.
"use strict";

window.Verify = (() => {
  const DEAL_VERSION = 1;
  const FULL_DECK = [..."CDHS"].flatMap((s) => [..."A23456789TJQK"].map((r) => r + s));
  const K = Uint32Array.from([
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
  ]);

  // SHA-256 (FIPS 180-4) of a string's UTF-8 bytes: 32 bytes.
  function sha256(text) {
    const data = new TextEncoder().encode(text);
    const blocks = Math.ceil((data.length + 9) / 64);
    const bytes = new Uint8Array(blocks * 64);
    bytes.set(data);
    bytes[data.length] = 0x80;
    const bits = data.length * 8;
    const view = new DataView(bytes.buffer);
    view.setUint32(bytes.length - 8, Math.floor(bits / 0x100000000));
    view.setUint32(bytes.length - 4, bits >>> 0);
    const hash = Uint32Array.from([
      0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
    ]);
    const w = new Uint32Array(64);
    const rotr = (x, n) => (x >>> n) | (x << (32 - n));
    for (let b = 0; b < blocks; b++) {
      for (let t = 0; t < 16; t++) w[t] = view.getUint32(b * 64 + t * 4);
      for (let t = 16; t < 64; t++) {
        const s0 = rotr(w[t - 15], 7) ^ rotr(w[t - 15], 18) ^ (w[t - 15] >>> 3);
        const s1 = rotr(w[t - 2], 17) ^ rotr(w[t - 2], 19) ^ (w[t - 2] >>> 10);
        w[t] = w[t - 16] + s0 + w[t - 7] + s1;
      }
      let [a, bb, c, d, e, f, g, hh] = hash;
      for (let t = 0; t < 64; t++) {
        const t1 = hh + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) + ((e & f) ^ (~e & g)) + K[t] + w[t];
        const t2 = (rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) + ((a & bb) ^ (a & c) ^ (bb & c));
        hh = g; g = f; f = e; e = (d + t1) >>> 0; d = c; c = bb; bb = a; a = (t1 + t2) >>> 0;
      }
      [a, bb, c, d, e, f, g, hh].forEach((x, i) => { hash[i] = (hash[i] + x) >>> 0; });
    }
    const out = new Uint8Array(32);
    const outView = new DataView(out.buffer);
    hash.forEach((x, i) => outView.setUint32(i * 4, x));
    return out;
  }

  const hex = (bytes) => [...bytes].map((x) => x.toString(16).padStart(2, "0")).join("");
  const commitment = (secret, salt) => hex(sha256(`${secret}:${salt}`));

  // shared.deal.deal_deck: a SHA-256 counter-mode stream of 32-bit words drives Fisher-Yates.
  function dealDeck(variant, seed) {
    const key = `${variant}:${DEAL_VERSION}:${seed}`;
    let counter = 0;
    let words = [];
    const next = () => {
      if (!words.length) {
        const block = new DataView(sha256(`${key}:${counter++}`).buffer);
        words = [0, 1, 2, 3, 4, 5, 6, 7].map((i) => block.getUint32(i * 4));
      }
      return words.shift();
    };
    const deck = FULL_DECK.slice();
    for (let i = 51; i > 0; i--) {
      const span = i + 1;
      const limit = 0x100000000 - (0x100000000 % span);
      let word = next();
      while (word >= limit) word = next();
      const j = word % span;
      [deck[i], deck[j]] = [deck[j], deck[i]];
    }
    return deck;
  }

  // The public deal of a deck (RULES.md, "How a deck is laid out") and its stock, top first.
  function layOut(variant, deck) {
    if (variant === "swiss") {
      const tableau = [];
      let at = 0;
      for (const size of [1, 2, 3, 4, 5, 4, 3, 2, 1]) {
        tableau.push(deck.slice(at, at + size));
        at += size;
      }
      return { tableau, reserve: [], stock: deck.slice(at) };
    }
    return { tableau: [], reserve: deck.slice(0, 8), stock: deck.slice(8) };
  }

  const cards = (list) => (list && list.length ? list.map((c) => c || "-").join(" ") : "nothing");
  const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);

  class Unfair extends Error {}
  class Unknown extends Error {}

  // One racer's game: its deal, then each turned card against the stock's next card.
  function checkGame(variant, deck, name, events) {
    const start = events[0];
    if (!start || start.type !== "game_started") throw new Unfair(`${name}'s game does not begin with its deal`);
    if (start.variant !== variant) throw new Unfair(`${name} played '${start.variant}', the race is '${variant}'`);
    if (start.deal_version !== DEAL_VERSION) {
      throw new Unknown(`${name}'s deal is of deal version ${start.deal_version}; this page deals version ${DEAL_VERSION}`);
    }
    const dealt = layOut(variant, deck);
    for (const kind of ["tableau", "reserve"]) {
      const shown = start.layout[kind] || [];
      dealt[kind].forEach((want, i) => {
        if (!same(want, shown[i])) {
          const pile = `${kind === "tableau" ? "t" : "r"}${i + 1}`;
          throw new Unfair(`${name} was dealt ${cards([].concat(shown[i] ?? []))} on ${pile}, the seed deals ${cards([].concat(want))}`);
        }
      });
    }
    if (start.stock_count !== dealt.stock.length) {
      throw new Unfair(`${name}'s stock holds ${start.stock_count} cards, the seed's deal ${dealt.stock.length}`);
    }
    let stock = dealt.stock;
    let view = window.Board.step(null, start);
    let moves = 0;
    for (const ev of events.slice(1)) {
      if (ev.type === "moved") {
        moves += 1;
        if (ev.move === "redeal") stock = view.waste.slice(); // the first dealt comes out first
        const shown = ev.revealed || [];
        const want = stock.slice(0, shown.length);
        if (!same(shown, want)) {
          throw new Unfair(`${name}'s move ${moves} (${ev.move}) turned up ${cards(shown)}, the seed's deck ${cards(want)}`);
        }
        stock = stock.slice(shown.length);
      }
      view = window.Board.step(view, ev);
    }
    return moves;
  }

  // The verdict on a race: {outcome: "fair" | "not fair" | "cannot be checked", reason, passed}.
  // `games`: [name, public events] of every racer.
  function verifyRace({ variant, commitment: published, seed, salt, games }) {
    const passed = [];
    try {
      if (!published) throw new Unknown("no commitment was published for this race");
      if (seed === null || seed === undefined || salt === null || salt === undefined) {
        throw new Unknown("no seed was revealed (a deal from an explicit deck, a daily challenge before its day is over, or a race not over yet)");
      }
      if (commitment(seed, salt) !== published) {
        throw new Unfair(`the revealed seed '${seed}' and salt ${salt} do not match the commitment ${published} published before the race`);
      }
      passed.push(`the commitment ${published} matches seed '${seed}' and salt`);
      if (!games.length) throw new Unknown("no racer's game was served");
      const deck = dealDeck(variant, seed);
      let moves = 0;
      for (const [name, events] of games) moves += checkGame(variant, deck, name, events);
      passed.push(games.length > 1
        ? `${games.length} racers dealt the seed's deal (deal version ${DEAL_VERSION})`
        : `the game dealt the seed's deal (deal version ${DEAL_VERSION})`);
      passed.push(`${moves} move${moves === 1 ? "" : "s"} replayed on the seed's deck, every card as shown`);
      return { outcome: "fair", reason: null, passed };
    } catch (e) {
      if (e instanceof Unfair) return { outcome: "not fair", reason: e.message, passed };
      if (e instanceof Unknown) return { outcome: "cannot be checked", reason: e.message, passed };
      throw e;
    }
  }

  return { sha256: (text) => hex(sha256(text)), commitment, dealDeck, verifyRace };
})();
