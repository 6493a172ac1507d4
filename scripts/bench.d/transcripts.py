#!/usr/bin/env python3
"""Writes transcript JSON files of contact-centre calls for the analytics benchmarks.

Usage: transcripts.py DIR [COUNT] [SEED]

Each file DIR/call-NNNN.json is a call of 5 minutes (300 s): 40 to 60 utterances alternating agent and
client, each utterance's words with their own start, end and confidence, about 700 to 800 words in all,
plus a queue in the metadata. The calls differ in their sentences, names, products, amounts and dates, so
a search for one word matches some of the calls and not all of them. The same COUNT and SEED always give
the same files.
"""

import json
import os
import random
import sys

AGENT = [
    "thank you for calling {company} my name is {agent} how can I help you today",
    "can I have your account number please",
    "could you confirm the postcode on the account",
    "let me just pull up your details",
    "I can see the {product} was ordered on the {day} of {month}",
    "I am sorry to hear that let me check what happened",
    "the invoice shows a charge of {amount} pounds",
    "I will raise a refund for {amount} pounds it takes three to five working days",
    "is there anything else I can help you with today",
    "I can transfer you to our {team} team",
    "the delivery is booked for {weekday} between nine and one",
    "your contract renews in {month} and the new price is {amount} pounds a month",
    "I have reset the password you should receive an email shortly",
    "for security could you tell me the first line of your address",
    "I understand that is frustrating and I apologise for the inconvenience",
    "I have added a note to the account so the next agent can see it",
    "the engineer will call you before the visit on {weekday}",
    "we can offer you a discount of {percent} percent for the next six months",
    "your reference number is {reference}",
    "please hold the line for a moment while I check with my supervisor",
    "the payment of {amount} pounds failed because the card has expired",
    "I can update the direct debit to the new bank details now",
    "the router should show a green light once it has restarted",
    "we will send a replacement {product} by courier",
    "the cancellation fee would be {amount} pounds",
    "thank you for your patience {client} have a lovely day",
]

CLIENT = [
    "hi I am calling about my {product}",
    "yes it is {reference}",
    "my name is {client} and the postcode is {postcode}",
    "the {product} stopped working on {weekday}",
    "I was charged twice on my last invoice",
    "I never received the delivery it was meant to arrive on {weekday}",
    "I would like to cancel my contract",
    "why has my bill gone up to {amount} pounds",
    "I cannot log in it says my password is wrong",
    "the internet keeps dropping every evening",
    "can you send me a copy of the invoice by email",
    "I have been waiting for the refund since {month}",
    "that is fine thank you",
    "no that is everything",
    "I already tried turning it off and on again",
    "I moved house in {month} and the address is still the old one",
    "can I speak to a manager please",
    "the engineer did not turn up on {weekday}",
    "I want to upgrade to the {plan} plan",
    "how much would it cost to keep the {product}",
    "okay that sounds good",
    "I was told someone would call me back but nobody did",
    "the app shows an error when I try to pay",
    "is there a cheaper option",
    "my card details have changed",
    "great thanks for your help",
]

SLOTS = {
    "company": ["Northwind", "Contoso", "Fabrikam", "Acme", "Globex", "Initech"],
    "agent": ["Sarah", "James", "Priya", "Tom", "Aisha", "Daniel", "Chloe", "Marek", "Lucia", "Omar"],
    "client": ["Mr Patel", "Mrs Jones", "Ms Novak", "Mr Okafor", "Mrs Schmidt", "Mr Brown", "Ms Rossi",
               "Mr Murphy", "Mrs Kowalski", "Ms Dubois", "Mr Silva", "Mrs Chen"],
    "product": ["router", "broadband", "phone", "tablet", "smartwatch", "television", "boiler",
                "washing machine", "sim card", "laptop", "headset", "camera", "modem", "printer"],
    "team": ["billing", "technical", "retentions", "collections", "complaints", "sales"],
    "plan": ["unlimited", "family", "fibre", "premium", "basic", "business"],
    "weekday": ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"],
    "month": ["January", "February", "March", "April", "May", "June", "July", "August", "September",
              "October", "November", "December"],
}


def fill(template, rng):
    def slot(name):
        if name == "amount":
            return str(rng.randint(5, 400))
        if name == "percent":
            return str(rng.choice([5, 10, 15, 20, 25, 30]))
        if name == "day":
            return str(rng.randint(1, 28))
        if name == "reference":
            return "REF" + str(rng.randint(100000, 999999))
        if name == "postcode":
            return rng.choice("ABCDEFGHKLMNPRSTW") + rng.choice("ABCDEFGHKLMNPRSTW") + str(rng.randint(1, 29))
        return rng.choice(SLOTS[name])

    out = []
    for word in template.split():
        if word.startswith("{") and word.endswith("}"):
            out.extend(slot(word[1:-1]).split())
        else:
            out.append(word)
    return out


def call(rng, number):
    count = rng.randint(40, 60)
    target_words = rng.randint(700, 800)
    # Words per utterance so that the call holds about target_words.
    sentences = []
    words_total = 0
    for i in range(count):
        bank = AGENT if i % 2 == 0 else CLIENT
        words = fill(bank[0] if i == 0 else rng.choice(bank), rng)
        sentences.append(words)
        words_total += len(words)
    while words_total < target_words - 10:
        i = rng.randrange(count)
        more = fill(rng.choice(AGENT if i % 2 == 0 else CLIENT), rng)
        sentences[i].extend(more)
        words_total += len(more)
    # 300 s: each utterance gets time in proportion to its words, with a pause before it.
    pause = 0.4
    lengths = [[rng.uniform(0.7, 1.3) for _ in words] for words in sentences]
    scale = (300.0 - pause * count) / sum(sum(x) for x in lengths)
    t = 0.0
    utterances = []
    for i, words in enumerate(sentences):
        t += pause
        start = t
        items = []
        for w, length in zip(words, lengths[i]):
            length *= scale
            items.append({"word": w, "start": round(t, 2), "end": round(min(t + length, 300.0), 2),
                          "confidence": round(rng.uniform(0.72, 0.99), 2)})
            t += length
        end = min(t, 300.0)
        utterances.append({
            "speaker": "agent" if i % 2 == 0 else "client",
            "channel": i % 2,
            "start": round(start, 2),
            "end": round(end, 2),
            "confidence": round(sum(x["confidence"] for x in items) / len(items), 2),
            "text": " ".join(words),
            "words": items,
        })
    return {
        "filename": "call-%06d.wav" % number,
        "datetime": "2026-%02d-%02dT%02d:%02d:%02d" % (rng.randint(1, 11), rng.randint(1, 28),
                                                       rng.randint(8, 19), rng.randint(0, 59),
                                                       rng.randint(0, 59)),
        "agent_id": "agent-%d" % rng.randint(1, 200),
        "audio_seconds": 300.0,
        "metadata": {"queue": rng.choice(SLOTS["team"])},
        "utterances": utterances,
    }


def main():
    out = sys.argv[1]
    count = int(sys.argv[2]) if len(sys.argv) > 2 else 1
    rng = random.Random(int(sys.argv[3]) if len(sys.argv) > 3 else 1)
    os.makedirs(out, exist_ok=True)
    for n in range(1, count + 1):
        with open(os.path.join(out, "call-%04d.json" % n), "w") as f:
            json.dump(call(rng, n), f, separators=(",", ":"))


if __name__ == "__main__":
    main()
