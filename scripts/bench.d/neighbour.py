#!/usr/bin/env python3
"""Writes the worst application a company may store and calls to match it with, for the neighbour
benchmark (scripts/bench neighbour).

Usage: neighbour.py DIR [CALLS] [SEED]

DIR/app-a.json and DIR/app-b.json are an application as close as it gets to every limit of
crates/scoring/src/apps/limits.rs (docs/scoring.md, Limits), in its costliest shapes: 100 words both
starting and ending with a wildcard (`*xy*`, tried on every distinct word of a call), 900 more starting
with one (`*xyz*q`, looked up by their last letter, which every word of the calls ends with), then 9,000
phrases of 5 or 6 words with two wildcards each filling the rest of the 50,000 words, 20,000 wildcards,
10,000 phrases and 500,000 characters. The two files differ in one letter, so that storing one after the
other changes the application's revision, and the calls are rescored. DIR/call-NNNN.json are CALLS (50)
calls of 200 distinct random words of 400 lowercase letters, each ending with `q`, in 10 turns. Prints the
application's tally, as the service counts it. The same CALLS and SEED always give the same files.
"""

import json
import os
import random
import string
import sys

MAX_PHRASES = 10_000
MAX_PATTERNS = 50_000
MAX_WILDCARDS = 20_000
MAX_LEADING = 1_000
MAX_UNANCHORED = 100
MAX_TEXT_CHARS = 500_000
MAX_PHRASE_CHARS = 250

WORDS_PER_CALL = 200
WORD_CHARS = 400
TURNS = 10
# The last letter of every word of the calls, and of the words starting with a wildcard.
SUFFIX = "q"


def letters(rng, n):
    return "".join(rng.choice(string.ascii_lowercase) for _ in range(n))


def distinct(rng, count, make):
    seen, out = set(), []
    while len(out) < count:
        item = make(rng)
        if item not in seen:
            seen.add(item)
            out.append(item)
    return out


def tally(phrases):
    """What limits.rs counts: phrases, word patterns, wildcards, words starting with a wildcard (and
    ending with one), characters."""
    patterns = wildcards = leading = unanchored = chars = 0
    for text in phrases:
        chars += len(text)
        for word in text.replace("|", " ").replace("&", " ").split():
            patterns += 1
            wildcards += word.count("*") + word.count("?")
            if word[0] in "*?":
                leading += 1
                unanchored += word[-1] in "*?"
    return {"phrases": len(phrases), "patterns": patterns, "wildcards": wildcards, "leading": leading,
            "unanchored": unanchored, "chars": chars}


def application(rng):
    unanchored = distinct(rng, MAX_UNANCHORED, lambda r: "*%s*" % letters(r, 2))
    leading = distinct(rng, MAX_LEADING - MAX_UNANCHORED, lambda r: "*%s*%s" % (letters(r, 3), SUFFIX))
    used = tally(unanchored + leading)
    fillers = MAX_PHRASES - used["phrases"]
    patterns_left = MAX_PATTERNS - used["patterns"]
    wildcards_left = MAX_WILDCARDS - used["wildcards"]
    chars_left = MAX_TEXT_CHARS - used["chars"]
    # Each filler phrase: 5 or 6 words (the first ones 6, so the words add up), two of them with a
    # literal start and a trailing `*`, the text as long as the characters left allow.
    six = patterns_left - 5 * fillers
    assert 0 <= six <= fillers and wildcards_left == 2 * fillers, (six, wildcards_left)
    filler = []
    for i in range(fillers):
        count = 6 if i < six else 5
        length = min(chars_left // (fillers - i), MAX_PHRASE_CHARS)
        # Word lengths: the characters but the separating spaces and the two `*`, spread over the words.
        room = length - (count - 1) - 2
        sizes = [room // count + (1 if k < room % count else 0) for k in range(count)]
        words = [letters(rng, size) for size in sizes]
        words[0] += "*"
        words[2] += "*"
        text = " ".join(words)
        chars_left -= len(text)
        filler.append(text)
    phrases = unanchored + leading + filler
    counts = tally(phrases)
    for name, limit in [("phrases", MAX_PHRASES), ("patterns", MAX_PATTERNS), ("wildcards", MAX_WILDCARDS),
                        ("leading", MAX_LEADING), ("unanchored", MAX_UNANCHORED), ("chars", MAX_TEXT_CHARS)]:
        assert counts[name] <= limit, (name, counts[name], limit)
    categories = {"Unanchored": {"phrases": unanchored}, "Leading": {"phrases": leading}}
    per_leaf = 1000
    for k in range(0, len(filler), per_leaf):
        categories["Filler %02d" % (k // per_leaf + 1)] = {"phrases": filler[k:k + per_leaf]}
    return {"categories": categories}, counts


def call(rng, number):
    words = distinct(rng, WORDS_PER_CALL, lambda r: letters(r, WORD_CHARS - 1) + SUFFIX)
    per_turn = WORDS_PER_CALL // TURNS
    utterances = []
    for t in range(TURNS):
        utterances.append({"speaker": "agent" if t % 2 == 0 else "client", "start": 30.0 * t,
                           "end": 30.0 * t + 29.0, "text": " ".join(words[t * per_turn:(t + 1) * per_turn])})
    return {"filename": "call-%04d.wav" % number, "datetime": "2026-11-20T10:%02d:00" % (number % 60),
            "audio_seconds": 300.0, "utterances": utterances}


def main():
    out = sys.argv[1]
    calls = int(sys.argv[2]) if len(sys.argv) > 2 else 50
    rng = random.Random(int(sys.argv[3]) if len(sys.argv) > 3 else 1)
    os.makedirs(out, exist_ok=True)
    app, counts = application(rng)
    with open(os.path.join(out, "app-a.json"), "w") as f:
        json.dump(app, f, separators=(",", ":"))
    # The other revision: the last filler phrase's last letter changed.
    last = sorted(k for k in app["categories"] if k.startswith("Filler"))[-1]
    text = app["categories"][last]["phrases"][-1]
    app["categories"][last]["phrases"][-1] = text[:-1] + ("a" if text[-1] != "a" else "b")
    with open(os.path.join(out, "app-b.json"), "w") as f:
        json.dump(app, f, separators=(",", ":"))
    for n in range(1, calls + 1):
        with open(os.path.join(out, "call-%04d.json" % n), "w") as f:
            json.dump(call(rng, n), f, separators=(",", ":"))
    print(" ".join("%s=%d" % (k, v) for k, v in counts.items()))


if __name__ == "__main__":
    main()
