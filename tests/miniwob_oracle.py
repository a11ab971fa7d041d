"""Rules that solve MiniWoB++ tasks through observe()/act() only, the way a model would: read the
instruction and the rendered page, pick element numbers, act, look again. No page internals.

Each rule maps (observation, instruction) to the next actions; it is called again on the page the
actions led to until the episode ends. A rule returns [] when it has nothing left to do.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import datetime

from taskcrew.tools.browser import (
    Action,
    BrowserSession,
    Click,
    Drag,
    Element,
    Hover,
    Observation,
    Press,
    Select,
    SelectText,
    SetChecked,
    Type,
)

Rule = Callable[[Observation, str], list[Action]]

EPISODE_JS = "(seed) => { Math.seedrandom(seed); core.EPISODE_MAX_TIME = 120000; core.startEpisodeReal(); }"


def start_episode(session: BrowserSession, site_url: str, task: str, seed: str) -> Observation:
    """Open the task's page, start its episode with ``seed`` and observe it as a model would."""
    result = session.goto(f"{site_url}/miniwob/{task}.html")
    assert result.ok, result.render()
    session.run(lambda page: page.evaluate(EPISODE_JS, seed))
    return session.observe()


def reward(session: BrowserSession) -> tuple[bool, float]:
    done, raw = session.run(lambda page: page.evaluate("[WOB_DONE_GLOBAL, WOB_RAW_REWARD_GLOBAL]"))
    return bool(done), float(raw)


def play(session: BrowserSession, site_url: str, task: str, seed: str, rule: Rule, rounds: int) -> None:
    """One episode solved by ``rule`` from the render alone; asserts the page's own reward is 1."""
    obs = start_episode(session, site_url, task, seed)
    q = query(obs)
    done, raw, render = False, 0.0, obs.render()
    for _ in range(rounds):
        actions = rule(obs, q)
        if not actions:
            break
        result = session.act(actions)
        render = result.render()
        done, raw = reward(session)
        if done:
            break
        obs = result.observation
    assert (done, raw) == (True, 1.0), render


# ---------------------------------------------------------------- reading the render
def query(obs: Observation) -> str:
    return obs.text.splitlines()[0]


def quoted(q: str) -> list[str]:
    return re.findall(r'"([^"]*)"', q)


def lines(obs: Observation) -> list[str]:
    return obs.text.splitlines()


def markers(line: str) -> list[int]:
    return [int(i) for i in re.findall(r"\[(\d+)\]", line)]


def named(obs: Observation, name: str, role: str | None = None, live: bool = False) -> Element:
    found = [
        el
        for el in obs.elements
        if el.name.strip().lower() == name.strip().lower()
        and (role is None or el.role == role)
        and (not live or el.state != "disabled")
    ]
    assert found, (name, [(e.index, e.role, e.name) for e in obs.elements])
    return found[0]


def maybe(obs: Observation, name: str) -> Element | None:
    for el in obs.elements:
        if el.name.strip().lower() == name.strip().lower():
            return el
    return None


def boxes(obs: Observation) -> list[Element]:
    return [el for el in obs.elements if el.role in ("textbox", "searchbox", "spinbutton")]


def submit(obs: Observation) -> Click:
    return Click(index=named(obs, "Submit").index)


def value(el: Element) -> str:
    return (el.field.value or "") if el.field else ""


NUMBERS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5}


def ordinal(text: str) -> int:
    return int(re.search(r"(\d+)(?:st|nd|rd|th)", text).group(1))  # type: ignore[union-attr]


# ---------------------------------------------------------------- rules
def social_media(obs: Observation, q: str) -> list[Action]:
    user, label = re.search(r"For the user (@\S+), click on the \"(.+)\" button", q).groups()  # type: ignore[union-attr]
    opened = [el for el in obs.elements if el.name in (label, f"{label} {user}") and el.state != "disabled"]
    if opened and label not in ("Reply", "Retweet", "Like"):
        return [Click(index=opened[0].index)]
    ls = lines(obs)
    for k, line in enumerate(ls):
        if re.search(re.escape(user) + r"(\s|$)", line):
            row = next(markers(x) for x in ls[k + 1 :] if len(markers(x)) >= 4)
            icons = {obs.element(i).name: i for i in row if obs.element(i)}  # type: ignore[union-attr]
            key = label.lower() if label in ("Reply", "Retweet", "Like") else "more"
            return [Click(index=icons[key])]
    raise AssertionError(f"no tweet by {user}")


def email_inbox(obs: Observation, q: str) -> list[Action]:
    sender = re.search(r"email by (\S+)", q).group(1)  # type: ignore[union-attr]
    text = obs.text
    reply = re.search(r'reply to them with the text "(.*)"', q)
    forward = re.search(r"forward that email to (\S+?)\.?$", q)
    if (
        reply
        and maybe(obs, "reply text") is None
        and "reply-text" not in {el.field.name for el in obs.elements if el.field and el.field.name}
    ):
        area = [el for el in obs.elements if el.field and el.field.type == "textarea"]
        if area:
            return [
                Type(index=area[0].index, text=reply.group(1)),
                Click(index=named(obs, "send reply").index),
            ]
    if forward:
        to = [el for el in obs.elements if el.role == "textbox" and el.field and el.field.type == "text"]
        if to and maybe(obs, "send forward"):
            return [
                Type(index=to[0].index, text=forward.group(1)),
                Click(index=named(obs, "send forward").index),
            ]
    if maybe(obs, "Reply") or maybe(obs, "Forward"):  # the email is open
        if reply:
            return [Click(index=named(obs, "Reply").index)]
        if forward:
            return [Click(index=named(obs, "Forward").index)]
    rows = [el for el in obs.elements if el.name.startswith(sender + " ")]
    assert rows, (sender, text)
    row = rows[0]
    after = [el for el in obs.elements if el.index > row.index]
    if "star" in q:
        return [Click(index=next(el.index for el in after if el.name == "star"))]
    if "trash" in q or "delete" in q:
        return [Click(index=next(el.index for el in after if el.name == "trash"))]
    return [Click(index=row.index)]


def form_sequence_3(obs: Observation, q: str) -> list[Action]:
    option, button = re.search(
        r"Choose (.+) from the dropdown, then click the button labeled \"(.+)\"", q
    ).groups()  # type: ignore[union-attr]
    combo = next(el for el in obs.elements if el.field and el.field.type == "select")
    return [Select(index=combo.index, option=option), Click(index=named(obs, button).index)]


def highlight_text(obs: Observation, q: str) -> list[Action]:
    footer = ("Last reward", "Last 10", "Time left", "Episodes")
    paragraphs = [line for line in lines(obs)[1:] if not markers(line) and not line.startswith(footer)]
    nth = re.search(r"(\d+)(?:st|nd|rd|th) paragraph", q)
    para = paragraphs[int(nth.group(1)) - 1] if nth else paragraphs[0]
    return [SelectText(text=para), submit(obs)]


def order_food(obs: Observation, q: str) -> list[Action]:
    ls = lines(obs)
    acts: list[Action] = []
    kind = re.search(r"Order (\d+) items that are (.+)$", q)
    if kind:  # the items whose icons say the kind, one each, until the count is reached
        count, label = int(kind.group(1)), f"(image: {kind.group(2).strip()})"
        pluses = []
        for k, line in enumerate(ls):
            if label in line:
                after = next(m for m in ls[k + 1 :] if markers(m))
                pluses.append(markers(after)[1])
        acts = [Click(index=pluses[i % len(pluses)]) for i in range(count)]
        return [*acts, Click(index=named(obs, "Order!").index)]
    wanted = re.search(r"Order (.+?) of each item: (.+)$", q)
    items: list[tuple[str, int]]
    if wanted:
        n = NUMBERS.get(wanted.group(1), 1)
        items = [(name.strip(), n) for name in wanted.group(2).split(",")]
    else:
        items = [
            (m[1].strip(), NUMBERS.get(m[0], 1))
            for m in re.findall(r"(\w+) (?:order of |orders of )?([^,]+)", q.split(":", 1)[1])
        ]
    for name, n in items:
        k = ls.index(name)
        plus = markers(next(m for m in ls[k + 1 :] if markers(m)))[1]
        acts += [Click(index=plus)] * n
    return [*acts, Click(index=named(obs, "Order!").index)]


# Which words mean much the same: the world knowledge a model brings (written here from common
# English, not read from any page), for tasks that ask for "words similar to" another.
SIMILAR = [
    {"big", "large", "huge", "enormous", "gigantic", "giant", "vast", "immense", "massive"},
    {"small", "tiny", "little", "mini", "petite", "minute", "miniature", "wee"},
    {"red", "scarlet", "crimson", "vermillion", "vermilion", "ruby", "cherry"},
    {"happy", "cheerful", "joyful", "gleeful", "delighted", "glad", "merry", "content"},
    {"sad", "unhappy", "sorrowful", "miserable", "tragic", "gloomy", "depressed", "glum"},
    {"angry", "mad", "furious", "irritated", "irate", "enraged", "annoyed", "livid"},
    {"evil", "wicked", "immoral", "sinful", "corrupt", "depraved", "vile", "villainous"},
    {"wrong", "incorrect", "mistaken", "erroneous", "false", "inaccurate"},
    {"real", "genuine", "actual", "authentic", "true"},
    {"strange", "odd", "peculiar", "unusual", "weird", "bizarre", "curious"},
    {"stop", "cease", "halt", "end", "finish", "quit", "conclude"},
    {"scared", "terrified", "panicked", "fearful", "frightened", "afraid", "alarmed"},
    {"quiet", "calm", "peaceful", "serene", "mild", "tranquil", "still", "silent"},
    {"old", "aged", "archaic", "ancient", "elderly", "antique"},
    {"love", "like", "adore", "favor", "favour", "cherish"},
    {"kill", "murder", "assassinate", "slay", "execute"},
    {"keep", "retain", "preserve", "sustain", "maintain", "hold"},
    {"hide", "conceal", "camouflage", "cover", "mask", "disguise"},
    {"hate", "despise", "loathe", "detest", "dislike", "abhor"},
    {"funny", "humorous", "amusing", "comical", "laughable", "hilarious"},
    {"fat", "fleshy", "plump", "chubby", "stout", "obese"},
    {"stupid", "dumb", "dull", "unwise", "foolish", "silly"},
    {"delicious", "savory", "savoury", "delectable", "appetizing", "tasty", "yummy"},
    {"cut", "slice", "carve", "chop", "sever", "snip"},
    {"brave", "courageous", "fearless", "bold", "valiant", "heroic"},
    {"begin", "start", "initiate", "launch", "commence"},
    {"answer", "reply", "response", "respond", "retort"},
    {"television", "televisions", "tv", "tvs"},
    {"house", "home", "houses", "homes", "dwelling", "residence"},
    {"fire", "flame", "fires", "flames", "blaze"},
    {"pig", "pork", "swine", "hog", "pigs"},
    {"rabbit", "rabbits", "bunny", "bunnies", "hare"},
    {"car", "cars", "automobile", "automobiles", "vehicle", "vehicles"},
    {"water", "waters"},
    {"fast", "quick", "rapid", "swift", "speedy"},
    {"smart", "clever", "intelligent", "bright", "wise"},
]


def similar(a: str, b: str) -> bool:
    a, b = a.lower().strip(), b.lower().strip()
    return a == b or any(a in group and b in group for group in SIMILAR)


def click_checkboxes_soft(obs: Observation, q: str) -> list[Action]:
    wanted = re.match(r"Select words similar to (.*) and click Submit", q).group(1)  # type: ignore[union-attr]
    words = [] if wanted == "nothing" else [w for w in re.split(r", | and ", wanted) if w]
    boxes_ = [el for el in obs.elements if el.role == "checkbox"]
    assert all(any(similar(w, el.name) for el in boxes_) for w in words), (words, [b.name for b in boxes_])
    return [
        *(
            SetChecked(action="check", index=el.index)
            for el in boxes_
            if any(similar(w, el.name) for w in words)
        ),
        submit(obs),
    ]


def scroll_text(obs: Observation, q: str) -> list[Action]:
    area = next(el for el in obs.elements if el.field and el.field.type == "textarea")
    word = re.sub(r"[^\w]", "", value(area).split()[-1])
    box = next(el for el in boxes(obs) if el.index != area.index)
    return [Type(index=box.index, text=word), submit(obs)]


def tic_tac_toe(obs: Observation, q: str) -> list[Action]:
    cells = [el for el in obs.elements if el.role == "clickable"][:9]
    board = [el.name.strip() for el in cells]
    lines3 = [(0, 1, 2), (3, 4, 5), (6, 7, 8), (0, 3, 6), (1, 4, 7), (2, 5, 8), (0, 4, 8), (2, 4, 6)]
    for who in ("X", "O"):  # win, else block
        for a, b, c in lines3:
            trio = [board[a], board[b], board[c]]
            if trio.count(who) == 2 and trio.count("") == 1:
                return [Click(index=cells[(a, b, c)[trio.index("")]].index)]
    for k in (4, 0, 2, 6, 8, 1, 3, 5, 7):
        if board[k] == "":
            return [Click(index=cells[k].index)]
    return []


def click_menu(obs: Observation, q: str) -> list[Action]:
    path = q.removeprefix("Select ").split(">")
    for depth in range(len(path) - 1, -1, -1):  # the deepest item already shown
        item = maybe(obs, path[depth])
        if item is not None and item.state != "disabled":
            if depth == len(path) - 1:
                return [Click(index=item.index)]
            return [Hover(index=item.index)]
    raise AssertionError(path)


def navigate_tree(obs: Observation, q: str) -> list[Action]:
    target = quoted(q)[0]
    found = maybe(obs, target)
    if found is not None:
        return [Click(index=found.index)]
    folder = next(el for el in obs.elements if "collapsed" in el.states and el.name != "hitarea")
    return [Click(index=folder.index)]


def choose_date(obs: Observation, q: str) -> list[Action]:
    when = datetime.strptime(re.search(r"\d\d/\d\d/\d{4}", q).group(0), "%m/%d/%Y")  # type: ignore[union-attr]
    shown = re.search(
        r"(January|February|March|April|May|June|July|August|September|October|November|December) (\d{4})",
        obs.text,
    )
    field = next((el for el in boxes(obs) if "date" in el.name.lower()), boxes(obs)[0])
    if value(field) == when.strftime("%m/%d/%Y"):
        return [submit(obs)] if maybe(obs, "Submit") else []
    if shown is None:
        return [Click(index=field.index)]
    current = datetime.strptime(f"{shown.group(1)} {shown.group(2)}", "%B %Y")
    if (current.year, current.month) < (when.year, when.month):
        return [Click(index=named(obs, "Next").index)]
    if (current.year, current.month) > (when.year, when.month):
        return [Click(index=named(obs, "Prev").index)]
    day = next(el for el in obs.elements if el.role == "link" and el.name == str(when.day))
    return [Click(index=day.index)] + ([submit(obs)] if maybe(obs, "Submit") else [])


def book_flight(obs: Observation, q: str) -> list[Action]:
    src, dst, date = re.search(r"from: (.+?) to: (.+?) on (\d\d/\d\d/\d{4})", q).groups()  # type: ignore[union-attr]
    books = [el for el in obs.elements if el.role == "button" and "book" in el.name.lower()]
    if books:  # the results: each "Book flight for $N" follows its flight's duration
        price = {el.index: int(re.sub(r"[^\d]", "", el.name.split("$")[-1])) for el in books}
        took: dict[int, int] = {}
        minutes = 0
        for line in lines(obs):
            d = re.fullmatch(r"(\d+)h (\d+)m", line.strip())
            if d:
                minutes = int(d.group(1)) * 60 + int(d.group(2))
            for i in markers(line):
                took[i] = minutes
        best = price if "cheapest" in q else took
        return [Click(index=min(price, key=lambda i: best[i]))]
    suggestions = [el for el in obs.elements if el.role in ("menuitem", "option", "clickable")]
    fields = [el for el in boxes(obs) if el.name in ("From:", "To:")]
    for field, term in zip(fields, (src, dst), strict=True):
        pick = [el for el in suggestions if term.lower() in el.name.lower()]
        if pick:  # the field's suggestions are open
            return [Click(index=pick[0].index)]
        if term.lower() in value(field).lower() and value(field) != term:
            continue  # a suggestion was taken
        return [Type(index=field.index, text=term)]
    when = next(el for el in boxes(obs) if el.name not in ("From:", "To:"))
    if value(when) != date:
        return choose_date(obs, f"Select {date}")
    return [Click(index=named(obs, "Search").index)]


def terminal(obs: Observation, q: str) -> list[Action]:
    box = boxes(obs)[-1]
    listing = re.findall(r"user\$ ?ls\n(.*?)\nuser\$", obs.text, re.S)
    if not listing:
        return [Type(index=box.index, text="ls", enter=True)]
    files = listing[-1].split()
    ext = re.search(r"extension \.(\S+)$", q)
    if ext:
        name = next(f for f in files if f.endswith("." + ext.group(1)))
    else:
        name = next(f for f in files if "." not in f)
    return [Type(index=box.index, text=f"rm {name}", enter=True)]


def use_spinner(obs: Observation, q: str) -> list[Action]:
    want = int(re.search(r"Select (-?\d+)", q).group(1))  # type: ignore[union-attr]
    box = boxes(obs)[0]
    now = int(value(box) or 0)
    if now == want:
        return [submit(obs)]
    # A spin button steps with the arrow keys (this one rejects typed keys).
    key = "ArrowUp" if want > now else "ArrowDown"
    return [Press(key=key, index=box.index)] * abs(want - now)


def use_slider(obs: Observation, q: str) -> list[Action]:
    want = int(re.search(r"Select (-?\d+)", q).group(1))  # type: ignore[union-attr]
    handle = next(el for el in obs.elements if "slider" in el.name)
    k = next(i for i, line in enumerate(lines(obs)) if f"[{handle.index}]" in line)
    now = int(lines(obs)[k + 1])
    if now == want:
        return [submit(obs)]
    key = "ArrowRight" if want > now else "ArrowLeft"
    return [Click(index=handle.index)] + [Press(key=key, index=handle.index)] * abs(want - now)


def copy_paste(obs: Observation, q: str) -> list[Action]:
    area = next(el for el in obs.elements if el.field and el.field.type == "textarea")
    box = next(el for el in boxes(obs) if el.index != area.index)
    return [Type(index=box.index, text=value(area)), submit(obs)]


def click_scroll_list(obs: Observation, q: str) -> list[Action]:
    names = re.split(r", | and ", re.search(r"Select (.+) from the scroll list", q).group(1))  # type: ignore[union-attr]
    lb = next(el for el in obs.elements if el.role == "listbox")
    return [Select(index=lb.index, option=n, mode="add") for n in names] + [submit(obs)]


def multi_layouts(obs: Observation, q: str) -> list[Action]:
    genre, director, year = re.search(r"Search for (.+) movies directed by (.+) from year (\d+)", q).groups()  # type: ignore[union-attr]
    acts: list[Action] = []
    for el in boxes(obs):
        n = el.name.lower()
        text = genre if "genre" in n else director if ("director" in n or "name" in n) else year
        acts.append(Type(index=el.index, text=text))
    return [*acts, Click(index=named(obs, "Search").index)]


def login_user_popup(obs: Observation, q: str) -> list[Action]:
    if "Exit to home page?" in obs.text:
        return [Click(index=named(obs, "Cancel").index)]
    user, pw = quoted(q)
    u, p = boxes(obs)[:2]
    acts: list[Action] = []
    if value(u) != user:
        acts.append(Type(index=u.index, text=user))
    if not value(p):
        acts.append(Type(index=p.index, text=pw))
    login = next(el for el in obs.elements if el.role == "button" and el.state != "disabled")
    return [*acts, Click(index=login.index)]


def search_engine(obs: Observation, q: str) -> list[Action]:
    term = quoted(q)[0]
    nth = ordinal(q)
    box = boxes(obs)[0]
    pages = [el for el in obs.elements if el.role == "link" and el.name.isdigit()]
    if value(box) != term or not pages:
        return [Type(index=box.index, text=term), Click(index=named(obs, "Search").index)]
    results = [
        el
        for el in obs.elements
        if el.role == "link" and el.name and not el.name.isdigit() and el.name not in ("<", ">", "«", "»")
    ]
    current = next((el for el in pages if "current" in el.states), None)
    page_no = int(current.name) if current else 1
    per_page = 3
    want_page = (nth - 1) // per_page + 1
    if want_page != page_no:
        return [Click(index=next(el.index for el in pages if el.name == str(want_page)))]
    return [Click(index=results[(nth - 1) % per_page].index)]


def read_table_2(obs: Observation, q: str) -> list[Action]:
    table = dict(re.findall(r"^\| (.+?) \| (.+)$", obs.text, re.M))
    acts: list[Action] = [Type(index=el.index, text=table[el.name.rstrip(":")].strip()) for el in boxes(obs)]
    return [*acts, submit(obs)]


def enter_time(obs: Observation, q: str) -> list[Action]:
    t = datetime.strptime(re.search(r"Enter (\d+:\d+ [AP]M)", q).group(1), "%I:%M %p")  # type: ignore[union-attr]
    return [Type(index=boxes(obs)[0].index, text=t.strftime("%H:%M")), submit(obs)]


def drag_items(obs: Observation, q: str) -> list[Action]:
    name, nth = re.search(r"Drag (.+) to the (\d+)\w\w position", q).groups()  # type: ignore[union-attr]
    items = [el for el in obs.elements if el.role == "clickable"]
    src = next(el for el in items if el.name == name)
    dst = items[int(nth) - 1]
    if src.index == dst.index:
        return []
    return [Drag(index=src.index, to_index=dst.index)]


RULES: dict[str, Rule] = {
    "social-media": social_media,
    "email-inbox": email_inbox,
    "email-inbox-reply": email_inbox,
    "form-sequence-3": form_sequence_3,
    "highlight-text": highlight_text,
    "highlight-text-2": highlight_text,
    "order-food": order_food,
    "click-checkboxes-soft": click_checkboxes_soft,
    "scroll-text": scroll_text,
    "tic-tac-toe": tic_tac_toe,
    "click-menu": click_menu,
    "navigate-tree": navigate_tree,
    "choose-date": choose_date,
    "terminal": terminal,
    "book-flight": book_flight,
    "use-spinner": use_spinner,
    "use-slider": use_slider,
    "copy-paste": copy_paste,
    "click-scroll-list": click_scroll_list,
    "multi-layouts": multi_layouts,
    "login-user-popup": login_user_popup,
    "search-engine": search_engine,
    "read-table-2": read_table_2,
    "enter-time": enter_time,
    "drag-items": drag_items,
}
