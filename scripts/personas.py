#!/usr/bin/env python3
"""Scores Raven on the personas of scenarios/personas/: thirty days of a person's life each,
run by `raven simulate` on the manual clock, with the embedded rules and no model.

Each persona is two files side by side:
  <name>.toml          the scenario (notes, messages, reactions), as `raven simulate` reads it;
  <name>.expect.toml   what a thoughtful assistant would do for them:
    [[expect]]            a moment to speak: `what` (a label), `words` (any one of them in a
                          message counts), `from` and `to` (local times, `YYYY-MM-DD HH:MM`);
    [restraint]           when to keep quiet: `quiet` ("22:30-06:30", no message inside),
                          `weekend_max` (messages a Saturday or Sunday at most),
                          `[[restraint.dnd]]` (`window` "09:00-11:00", `days` "mon-fri"),
                          `[[restraint.hush]]` (`from`, `to`: the user asked for quiet then),
                          `[[restraint.weekdays_only]]` (`words`, `from`: a habit of the
                          working week, not to be named on a Saturday or Sunday from then),
                          `[[restraint.silent]]` (`words`, `from`, `to`: nothing to say of
                          it then, an off week of a fortnightly duty say; a menu that
                          offers to remind of a later day is not speaking of it).

Every proactive message the user received counts: briefs, heads-ups, routines, menus and the
reminders the persona scheduled. A discovery menu whose every option was offered in the week
before is a violation too (nothing new). A reminder of something that starts within two hours may pass a
do-not-disturb window (not quiet hours), as the spec lets high priority do. An anticipation is hit when some message inside its window
names it; a restraint violation is a message where the rules say none.

Usage: scripts/personas.py [--raven PATH] [--check] [--verbose] [--self-test] [PERSONA ...]
  --raven    the binary (default: target/release/raven)
  --check    exit 1 unless every persona hits >= 80 % with no restraint violation
  --verbose  list every miss and violation, and every message
  --self-test  check the scoring rules on made-up messages (no binary needed)
"""

import argparse
import json
import re
import subprocess
import sys
import tempfile
import tomllib
from datetime import datetime, time, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

ROOT = Path(__file__).resolve().parent.parent
PERSONAS = ROOT / "scenarios" / "personas"
DAYS = {"mon": 0, "tue": 1, "wed": 2, "thu": 3, "fri": 4, "sat": 5, "sun": 6}
TARGET = 0.80


def window(text):
    start, end = text.split("-")
    return time.fromisoformat(start), time.fromisoformat(end)


def inside(t, w):
    start, end = w
    return start <= t < end if start <= end else t >= start or t < end


def days(text):
    if text in ("daily", ""):
        return set(range(7))
    if "-" in text:
        a, b = text.split("-")
        return set(range(DAYS[a], DAYS[b] + 1))
    return {DAYS[d] for d in text.split(",")}


def messages(report, tz):
    """(local time, text) of every proactive message delivered."""
    out = []
    for mark in report["marks"]:
        if mark["lane"] != "delivery":
            continue
        at = datetime.fromisoformat(mark["at"]).astimezone(tz)
        text = mark["label"].split(": ", 1)[-1]
        out.append((at, text))
    return out


def local(text, tz):
    return datetime.strptime(text, "%Y-%m-%d %H:%M").replace(tzinfo=tz)


def hits(expect, said, tz):
    hit, missed = 0, []
    for e in expect:
        start, end = local(e["from"], tz), local(e["to"], tz)
        words = [w.lower() for w in e["words"]]
        if any(start <= at <= end and any(w in text.lower() for w in words) for at, text in said):
            hit += 1
        else:
            missed.append(f"missed: {e['what']} ({e['from']} to {e['to']})")
    return hit, missed


def imminent(at, text):
    """A reminder of something that starts or is due within two hours: the spec lets one such
    high-priority message pass a do-not-disturb window (a focus hour, not the night)."""
    found = re.search(r"(?:starts at|is due at|开始时间|到期时间)\s*(\d{1,2}:\d\d)", text.splitlines()[0])
    if not found:
        return False
    then = datetime.combine(at.date(), time.fromisoformat(found.group(1).zfill(5)), at.tzinfo)
    return at <= then <= at + timedelta(hours=2)


def stale_menus(said):
    """A discovery menu whose every option was offered in the week before: nothing new."""
    found, last = [], {}
    for at, text in said:
        options = re.findall(r"^\d+\. \*\*(.+?)\*\*", text, re.M)
        if not options:
            continue
        if all(o in last and at - last[o] < timedelta(days=7) for o in options):
            found.append(f"a menu with nothing new: {at:%a %m-%d %H:%M}")
        last.update({o: at for o in options})
    return found


def violations(rules, said, tz):
    found = []
    quiet = window(rules["quiet"]) if "quiet" in rules else None
    dnd = [(window(d["window"]), days(d.get("days", "daily")), d["window"]) for d in rules.get("dnd", [])]
    hush = [(local(h["from"], tz), local(h["to"], tz)) for h in rules.get("hush", [])]
    habits = [(local(h["from"], tz), [w.lower() for w in h["words"]]) for h in rules.get("weekdays_only", [])]
    silent = [(local(q["from"], tz), local(q["to"], tz), [w.lower() for w in q["words"]]) for q in rules.get("silent", [])]
    per_day = {}
    for at, text in said:
        head = f"{at:%a %m-%d %H:%M} {text.splitlines()[0][:60]}"
        if quiet and inside(at.time(), quiet):
            found.append(f"in quiet hours {rules['quiet']}: {head}")
        for w, on, name in dnd:
            if at.weekday() in on and inside(at.time(), w) and not imminent(at, text):
                found.append(f"in do-not-disturb {name}: {head}")
        for start, end in hush:
            if start <= at < end:
                found.append(f"after the user asked for quiet: {head}")
        for start, end, words in silent:
            # A menu offering to remind of a later day does not speak of it then.
            if start <= at <= end and any(w in text.lower() for w in words) and "**" not in text:
                found.append(f"nothing to say of {words[0]} then: {head}")
        for start, words in habits:
            if at >= start and at.weekday() >= 5 and any(w in text.lower() for w in words):
                found.append(f"a weekday habit at the weekend: {head}")
        per_day.setdefault(at.date(), []).append(head)
    found += stale_menus(said)
    cap = rules.get("weekend_max")
    for day, heads in sorted(per_day.items()):
        if cap is not None and day.weekday() >= 5 and len(heads) > cap:
            found.append(f"{len(heads)} messages on {day:%a %m-%d} (at most {cap} a weekend day)")
    return found


def score(raven, scenario, verbose):
    expect = tomllib.loads(scenario.with_suffix(".expect.toml").read_text())
    plan = tomllib.loads(scenario.read_text())
    tz = ZoneInfo(plan.get("timezone", "UTC"))
    with tempfile.TemporaryDirectory() as out:
        subprocess.run([raven, "simulate", str(scenario), "--out", out], check=True, stdout=subprocess.DEVNULL)
        report = json.loads((Path(out) / "report.json").read_text())
    said = messages(report, tz)
    hit, missed = hits(expect["expect"], said, tz)
    broken = violations(expect.get("restraint", {}), said, tz)
    row = {
        "persona": plan.get("name", scenario.stem),
        "hit": hit,
        "of": len(expect["expect"]),
        "violations": len(broken),
        "per_day": len(said) / max(1, plan.get("days", 1)),
    }
    if verbose:
        for line in missed + broken:
            print(f"  {scenario.stem}: {line}")
        for at, text in said:
            print(f"    {at:%a %m-%d %H:%M}  {text.splitlines()[0][:90]}")
    return row


def self_test():
    """Each rule on made-up messages: one that keeps it and one that breaks it."""
    tz = ZoneInfo("Europe/London")
    at = lambda text: local(text, tz)
    rules = {
        "quiet": "22:30-06:30",
        "weekend_max": 1,
        "dnd": [{"window": "09:00-11:00", "days": "mon-fri"}],
        "hush": [{"from": "2026-03-17 17:05", "to": "2026-03-18 06:30"}],
        "weekdays_only": [{"words": ["vitamin"], "from": "2026-03-16 00:00"}],
        "silent": [{"words": ["bins"], "from": "2026-03-10 00:00", "to": "2026-03-10 23:59"}],
    }
    kept = [
        (at("2026-03-16 07:00"), "Good morning! 1. vitamin (usually at 07:00)"),
        (at("2026-03-16 09:30"), "Reminder: Dentist starts at 10:00."),
        (at("2026-03-14 12:00"), "Heads-up: the rent"),
        (at("2026-03-10 11:00"), "Anything?\n1. **Remind me of “Bins out” on Tue 17 Mar** — due"),
    ]
    broken = [
        (at("2026-03-16 23:00"), "Heads-up: late"),
        (at("2026-03-16 09:30"), "Anything I can take off your plate today?"),
        (at("2026-03-17 19:00"), "It's about the time you usually handle tea."),
        (at("2026-03-21 07:00"), "It's about the time you usually handle vitamin."),
        (at("2026-03-10 07:00"), "Bins out is due today"),
        (at("2026-03-10 11:00"), "Anything?\n1. **Remind me of “Bins out” on Tue 17 Mar** — due"),
        (at("2026-03-11 11:00"), "Anything?\n1. **Remind me of “Bins out” on Tue 17 Mar** — due"),
        (at("2026-03-21 12:00"), "Heads-up: the rent"),
    ]
    assert violations(rules, kept, tz) == [], violations(rules, kept, tz)
    found = violations(rules, broken, tz)
    # Quiet hours, the focus hours, the hush, the weekday habit, the off week, the menu with
    # nothing new, and two messages on a Saturday: one each.
    assert len(found) == 7, found
    expect = [{"what": "rent", "words": ["rent"], "from": "2026-03-14 00:00", "to": "2026-03-14 23:59"},
              {"what": "tax", "words": ["tax"], "from": "2026-03-14 00:00", "to": "2026-03-14 23:59"}]
    hit, missed = hits(expect, kept, tz)
    assert (hit, len(missed)) == (1, 1), (hit, missed)
    print("self-test: every rule keeps what it should and finds what it should")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--raven", default=str(ROOT / "target" / "release" / "raven"))
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--verbose", action="store_true")
    ap.add_argument("--self-test", action="store_true", help="check the scoring rules on made-up messages")
    ap.add_argument("persona", nargs="*")
    args = ap.parse_args()
    if args.self_test:
        self_test()
        return 0
    names = args.persona or sorted(p.name.removesuffix(".expect.toml") for p in PERSONAS.glob("*.expect.toml"))
    rows = [score(args.raven, PERSONAS / f"{n}.toml", args.verbose) for n in names]
    print(f"| persona | anticipations hit | restraint violations | messages a day |")
    print(f"|---|---|---|---|")
    for r in rows:
        share = r["hit"] / r["of"] if r["of"] else 1.0
        print(f"| {r['persona']} | {r['hit']} of {r['of']} ({share:.0%}) | {r['violations']} | {r['per_day']:.1f} |")
    hit, of = sum(r["hit"] for r in rows), sum(r["of"] for r in rows)
    broken = sum(r["violations"] for r in rows)
    print(f"| all | {hit} of {of} ({hit / max(1, of):.0%}) | {broken} | |")
    fails = [r for r in rows if r["violations"] or r["hit"] < TARGET * r["of"]]
    if args.check and fails:
        print(f"below the target ({TARGET:.0%} hit, no violation): {', '.join(r['persona'] for r in fails)}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
