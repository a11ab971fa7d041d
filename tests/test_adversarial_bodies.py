"""A request's body as the approver is shown it, the risk rules judge it and the key covers it: read
by one parser, chosen by the exact media type of its Content-Type (tools/browser/network.py).

- the media type is the type/subtype before any parameter, in any case; */*+json is JSON; a
  parameter that merely names another type changes nothing;
- a JSON body is every leaf a field named by its path ("payment.amount", "lines[0].amount"), so the
  rules' field names (thresholds, bank details) apply to nested values;
- what the parser cannot account for exactly (a type it does not read, a repeated JSON key, a syntax
  error, bytes not valid in the declared charset, a multipart body it cannot split exactly, text that
  is no name=value lines) is shown as such, its bytes escaped (never replaced), and flagged: checked
  by hand, by two people;
- the key changes whenever the bytes the system reads change.

Unit tests first, then a page in real Chromium whose script sends such bodies through the gate.
"""

from __future__ import annotations

from typing import Any

import pytest
from fixtures_browser import RecordingSite, SessionFactory

from taskcrew.approvals.key import TEXT_MARK, file_value, request_key, same_fields
from taskcrew.approvals.rules import NOT_EXACT, assess, load_rules
from taskcrew.tools.browser.network import _raw_fields
from taskcrew.tools.human import ApprovalDecision, ScriptedHuman

URL = "http://127.0.0.1:8800/api/bills"
RULES = load_rules()
IBAN = "GB33BUKB20201555555555"


class FakeRequest:
    """What Playwright hands the guard: the headers (names in lower case) and the body's bytes."""

    def __init__(self, content_type: str | None, body: bytes | None) -> None:
        self.headers = {} if content_type is None else {"content-type": content_type}
        self.post_data_buffer = body


def read(content_type: str | None, body: bytes | None) -> list[tuple[str, str]]:
    return _raw_fields(FakeRequest(content_type, body))  # type: ignore[arg-type]


def flags(fields: list[tuple[str, str]]) -> list[str]:
    return [f.rule for f in assess(fields, URL, RULES).flags]


def needs_two(fields: list[tuple[str, str]]) -> bool:
    return assess(fields, URL, RULES).needs_second_approver


def unread(fields: list[tuple[str, str]]) -> bool:
    """The body was shown as not read exactly, and the rules flag it for two people."""
    marked = any(n.startswith(NOT_EXACT) or v.startswith(NOT_EXACT) for n, v in fields)
    return marked and "unread_body" in flags(fields) and needs_two(fields)


def key(fields: list[tuple[str, str]]) -> str:
    return request_key("POST", URL, fields)


# ---- the parser is chosen by the exact media type ----------------------------------------------
def test_a_parameter_naming_another_type_does_not_choose_the_parser() -> None:
    body = b'{"\\u0061mount":"9500.00","vendor_id":"3","memo":"&amount=95.00&vendor_id=3&x="}'
    fields = read("application/json; x=application/x-www-form-urlencoded", body)
    assert fields == [("amount", "9500.00"), ("vendor_id", "3"), ("memo", "&amount=95.00&vendor_id=3&x=")]
    assert "amount_above_threshold" in flags(fields) and needs_two(fields)


@pytest.mark.parametrize(
    "content_type",
    [
        "application/json",
        "Application/JSON; charset=UTF-8",
        " application/json ;charset=utf-8",
        "application/vnd.erp+json",
    ],
)
def test_json_is_json_in_any_case_and_as_a_json_suffix(content_type: str) -> None:
    assert read(content_type, b'{"amount":"9500.00"}') == [("amount", "9500.00")]


def test_a_form_type_with_a_json_parameter_is_read_as_a_form() -> None:
    fields = read("application/x-www-form-urlencoded; x=application/json", b"amount=95.00&vendor_id=3")
    assert fields == [("amount", "95.00"), ("vendor_id", "3")]


@pytest.mark.parametrize(
    ("content_type", "body"),
    [
        ("application/octet-stream", b'{"amount":"9500.00"}'),
        (None, b"amount=9500.00"),
        ("application/json, application/x-www-form-urlencoded", b"amount=95.00"),
        ("json", b'{"amount":"9500.00"}'),
        ("text/json", b'{"amount":"9500.00"}'),
        ("application/json; charset=utf-16", b'{"amount":"9500.00"}'),
        ("application/x-www-form-urlencoded; charset=x-made-up", b"amount=95.00"),
        ("application/x-www-form-urlencoded; charset=unicode_escape", b"amount=95.00"),
        ("application/x-www-form-urlencoded; charset=utf-8; charset=latin-1", b"amount=95.00"),
        ("text/plain", b'{"amount":"9500.00"}'),  # JSON sent as text/plain (no CORS preflight)
        ("text/plain", b"amount=95.00"),  # no CRLF after it: not what a browser's form sends
    ],
)
def test_a_body_of_a_type_or_shape_the_gate_does_not_read_is_flagged(
    content_type: str | None, body: bytes
) -> None:
    fields = read(content_type, body)
    assert [n for n, _ in fields] == ["(body)"] and unread(fields)
    assert body.decode() in fields[0][1]  # shown as sent


def test_no_body_is_no_field() -> None:
    assert read("application/octet-stream", b"") == [] and read(None, None) == []


# ---- JSON: nested values are judged --------------------------------------------------------------
def test_nested_json_is_read_as_path_named_fields_and_judged() -> None:
    nested = read(
        "application/json", f'{{"vendor_id":"3","payment":{{"amount":"9500.00","iban":"{IBAN}"}}}}'.encode()
    )
    assert nested == [("vendor_id", "3"), ("payment.amount", "9500.00"), ("payment.iban", IBAN)]
    assert set(flags(nested)) == {"bank_details", "amount_above_threshold"} and needs_two(nested)
    lines = read(
        "application/json", f'{{"lines":[{{"amount":"9500.00"}}],"payee":{{"account":"{IBAN}"}}}}'.encode()
    )
    assert lines == [("lines[0].amount", "9500.00"), ("payee.account", IBAN)]
    assert set(flags(lines)) == {"bank_details", "amount_above_threshold"}


def test_a_nested_amount_under_its_threshold_is_judged_in_its_nested_currency() -> None:
    fields = read("application/json", b'{"payment":{"amount":{"value":"4500.00","currency":"GBP"}}}')
    assert fields == [("payment.amount.value", "4500.00"), ("payment.amount.currency", "GBP")]
    assert flags(fields) == ["amount_above_threshold"]  # GBP's threshold is 4000.00


def test_json_leaves_are_shown_as_the_system_reads_them() -> None:
    body = b'[{"amount":9500.00,"rate":9.5e3,"ok":true,"note":null,"tags":[],"meta":{},"x":-0.5}]'
    assert read("application/json", body) == [
        ("[0].amount", "9500.00"),  # as sent, never as a float's text
        ("[0].rate", "9500"),  # an exponent written out: the rules read 9500, not 9.53
        ("[0].ok", "true"),
        ("[0].note", "null"),
        ("[0].tags", "[]"),
        ("[0].meta", "{}"),
        ("[0].x", "-0.5"),
    ]
    assert flags(read("application/json", b'{"total":9.5e3}')) == ["amount_above_threshold"]
    assert read("application/json", b'"9500.00"') == [("(value)", "9500.00")]


def test_a_key_that_is_no_plain_name_cannot_pass_for_a_path() -> None:
    dotted = read("application/json", b'{"payment.amount":"1.00","payment":{"amount":"2.00"}}')
    assert dotted == [('["payment.amount"]', "1.00"), ("payment.amount", "2.00")]
    assert key(read("application/json", b'{"a.b":"1"}')) != key(read("application/json", b'{"a":{"b":"1"}}'))
    assert key(read("application/json", b'{"0":"1"}')) != key(read("application/json", b'["1"]'))
    assert read("application/json", b'{"bank account":"x"}') == [('["bank account"]', "x")]
    assert "bank_details" in flags([('["bank account"]', "x")])  # judged by its words


@pytest.mark.parametrize(
    "body",
    [
        b'{"amount":"95.00","amount":"9500.00"}',  # one system takes the first, another the last
        b'{"payment":{"iban":"DE89370400440532013000","iban":"GB33BUKB20201555555555"}}',
        b'{"amount":NaN}',
        b'{"amount":"9500.00"',
        b'{"amount":"9500.00"} {"amount":"1"}',
        b'{"payee":"\\ud800"}',
        b'{"amount":1e999999}',
        b'\xef\xbb\xbf{"amount":"9500.00"}',
        b'{"payee":"M\xfcller"}',
        b"[" * 100_000 + b"]" * 100_000,
    ],
)
def test_json_that_cannot_be_read_exactly_is_flagged(body: bytes) -> None:
    fields = read("application/json", body)
    assert [n for n, _ in fields] == ["(body)"] and unread(fields)


def test_a_long_unread_body_is_cut_but_keyed_by_every_byte() -> None:
    one = read("application/octet-stream", b"x" * 10_000 + b"1")
    two = read("application/octet-stream", b"x" * 10_000 + b"2")
    assert len(one[0][1]) < 5000 and "10001 bytes in all, SHA-256" in one[0][1]
    assert key(one) != key(two) and unread(one)


# ---- bytes: never replaced, never collapsed --------------------------------------------------------
def test_bytes_not_valid_in_the_charset_are_escaped_flagged_and_keyed() -> None:
    mueller = read("application/x-www-form-urlencoded", b"payee=M%FCller+GmbH&amount=10.00")
    maeller = read("application/x-www-form-urlencoded", b"payee=M%E4ller+GmbH&amount=10.00")
    assert mueller[0][1].endswith(") M\\xfcller GmbH") and maeller[0][1].endswith(") M\\xe4ller GmbH")
    assert key(mueller) != key(maeller) and not same_fields(mueller, maeller)
    assert unread(mueller) and mueller[1] == ("amount", "10.00")


def test_an_escape_cannot_be_forged_by_text() -> None:
    byte = read("application/x-www-form-urlencoded", b"payee=M%FCller")
    text = read("application/x-www-form-urlencoded", b"payee=M%5Cxfcller")  # "M\xfcller" as text
    assert key(byte) != key(text) and not unread(text)
    # a text that starts like the parser's own mark is sent as text, and keyed apart from it
    forged = read("application/x-www-form-urlencoded", b"payee=" + byte[0][1].encode().replace(b"\\", b"%5C"))
    assert forged[0][1] == TEXT_MARK + byte[0][1] and key(forged) != key(byte)
    backslash = read("application/x-www-form-urlencoded", b"payee=%5C%FC")
    assert backslash[0][1].endswith(") \\\\\\xfc")  # the backslash doubled, the byte escaped


def test_a_declared_charset_is_read_exactly() -> None:
    fields = read("application/x-www-form-urlencoded; charset=ISO-8859-1", b"payee=M%FCller+GmbH")
    assert fields == [("payee", "Müller GmbH")] and flags(fields) == []
    plain = read("text/plain; charset=windows-1252", b"payee=M\xfcller\r\n")
    assert plain == [("payee", "Müller")]


def test_a_name_with_bytes_not_valid_is_marked_too() -> None:
    fields = read("application/x-www-form-urlencoded", b"am%FCunt=9500.00")
    assert fields[0][0].startswith(NOT_EXACT) and unread(fields)


# ---- forms: text/plain and multipart, exactly as a browser writes them -----------------------------
def test_a_text_plain_form_is_name_value_lines() -> None:
    fields = read("text/plain", b"amount=95.00\r\nmemo=a=b\r\n")
    assert fields == [("amount", "95.00"), ("memo", "a=b")] and flags(fields) == []
    assert unread(read("text/plain", b"amount=95.00\r\nnote\r\n"))  # a line with no "="


B = "----WebKitFormBoundaryQ1w2E3r4"


def multipart(*parts: bytes, boundary: str = B, end: bytes = b"--\r\n") -> bytes:
    delimiter = b"--" + boundary.encode()
    return b"".join(delimiter + b"\r\n" + p + b"\r\n" for p in parts) + delimiter + end


def text_part(name: str, value: bytes) -> bytes:
    return f'Content-Disposition: form-data; name="{name}"\r\n\r\n'.encode() + value


def test_a_multipart_body_is_read_part_by_part() -> None:
    file_part = b'Content-Disposition: form-data; name="doc"; filename="inv.pdf"\r\nContent-Type: application/pdf\r\n\r\n%PDF\xff\x00'
    fields = read(f"multipart/form-data; boundary={B}", multipart(text_part("amount", b"95.00"), file_part))
    assert fields == [("amount", "95.00"), ("doc", file_value("inv.pdf", 6))] and flags(fields) == []
    quoted = read(f'Multipart/Form-Data; boundary="{B}"', multipart(text_part("amount", b"95.00")))
    assert quoted == [("amount", "95.00")]
    assert read(f"multipart/form-data; boundary={B}", f"--{B}--\r\n".encode()) == []  # no field
    latin = read(f"multipart/form-data; boundary={B}", multipart(text_part("payee", b"M\xfcller")))
    assert latin[0][1].endswith(") M\\xfcller") and unread(latin)


@pytest.mark.parametrize(
    ("content_type", "body"),
    [
        ("multipart/form-data", multipart(text_part("amount", b"95.00"))),  # no boundary
        (  # a second close delimiter: a server stops at the first one
            f"multipart/form-data; boundary={B}",
            multipart(text_part("amount", b"95.00\r\n--" + B.encode() + b"--\r\n")),
        ),
        (  # a line that starts like the boundary inside a part
            f"multipart/form-data; boundary={B}",
            multipart(text_part("memo", b"x\r\n--" + B.encode() + b"x\r\n"), text_part("amount", b"9500.00")),
        ),
        (  # a header a server may decode the part by
            f"multipart/form-data; boundary={B}",
            multipart(b"Content-Transfer-Encoding: base64\r\n" + text_part("amount", b"OTUwMC4wMA==")),
        ),
        (f"multipart/form-data; boundary={B}", multipart(b"Content-Disposition: form-data\r\n\r\n95.00")),
        (
            f"multipart/form-data; boundary={B}",
            multipart(b'Content-Disposition: form-data; name="a"; name="b"\r\n\r\n95.00'),
        ),
        (f"multipart/form-data; boundary={B}", multipart(text_part("amount", b"95.00"), end=b"")),
        (f"multipart/form-data; boundary={B}", b"preamble\r\n" + multipart(text_part("amount", b"95.00"))),
    ],
)
def test_a_multipart_body_that_cannot_be_split_exactly_is_flagged(content_type: str, body: bytes) -> None:
    fields = read(content_type, body)
    assert [n for n, _ in fields] == ["(body)"] and unread(fields)


# ---- the rules: the mark is flagged, a path-named leaf is judged by its words ----------------------
def test_the_rules_judge_path_named_leaves_by_their_words() -> None:
    assert flags([("payment.amount", "9500.00")]) == ["amount_above_threshold"]
    assert flags([("lines[0].amount", "9500.00")]) == ["amount_above_threshold"]
    assert flags([("payment.iban", "x")]) == ["bank_details"]
    assert flags([("payment.amount", "95.00")]) == []


def test_the_rules_flag_what_was_not_read_exactly_for_two_people() -> None:
    fields = [("(body)", f"{NOT_EXACT}a body of type application/pdf, which the gate does not read) %PDF")]
    found = assess(fields, URL, RULES).flags
    assert [f.rule for f in found] == ["unread_body"] and found[0].second_approver
    assert "application/pdf" in found[0].message and "check it by hand" in found[0].message


# ---- in Chromium: a page's script sends such bodies through the gate --------------------------------


def send(session: Any, content_type: str, body: str, path: str = "/record/api") -> str:
    """A script's fetch from the page: ``body`` is a JS expression (a string or a Uint8Array)."""
    script = (
        f"() => fetch({path!r}, {{method: 'POST', headers: {{'Content-Type': {content_type!r}}}, body: {body}}})"
        ".then((r) => 'status ' + r.status, () => 'failed')"
    )
    return str(session.run(lambda page: page.evaluate(script)))


def shown(human: ScriptedHuman, i: int = 0) -> list[tuple[str, str]]:
    return [(f.name, f.value) for f in human.requests[i].fields]


@pytest.mark.browser
def test_in_chromium_the_approver_sees_what_the_server_reads(
    make_session: SessionFactory, site: RecordingSite
) -> None:
    human = ScriptedHuman([ApprovalDecision.reject(), ApprovalDecision.reject(), ApprovalDecision.reject()])
    session = make_session(human=human)
    session.goto(site.page("fetch.html"))
    smuggled = '\'{"\\\\u0061mount":"9500.00","memo":"&amount=95.00&x="}\''
    assert send(session, "application/json; x=application/x-www-form-urlencoded", smuggled) == "failed"
    assert shown(human) == [("amount", "9500.00"), ("memo", "&amount=95.00&x=")]
    assert any("9500.00" in f and "above" in f for f in human.requests[0].flags)
    nested = f"JSON.stringify({{vendor_id: '3', payment: {{amount: '9500.00', iban: '{IBAN}'}}}})"
    assert send(session, "application/json", nested) == "failed"
    assert shown(human, 1) == [("vendor_id", "3"), ("payment.amount", "9500.00"), ("payment.iban", IBAN)]
    assert any("bank details" in f for f in human.requests[1].flags)
    assert any("above" in f for f in human.requests[1].flags)
    as_text = "JSON.stringify({amount: '9500.00'})"  # JSON as text/plain: the server may well read it
    assert send(session, "text/plain", as_text) == "failed"
    ((name, value),) = shown(human, 2)
    assert name == "(body)" and value.startswith(NOT_EXACT) and '{"amount":"9500.00"}' in value
    assert any("could not be read exactly" in f for f in human.requests[2].flags)
    assert not site.posts()
    human.assert_complete()


@pytest.mark.browser
def test_in_chromium_other_bytes_are_asked_again(make_session: SessionFactory, site: RecordingSite) -> None:
    """Approved for "M\\xfcller" (the system answered 404: the approval stands), a script's second
    send with "M\\xe4ller" is a new request, asked again — not the approved one."""
    human = ScriptedHuman([ApprovalDecision.approve(), ApprovalDecision.reject()])
    session = make_session(human=human)
    session.goto(site.page("fetch.html"))
    form = "application/x-www-form-urlencoded"
    sent = [send(session, form, f"'payee=M%{byte}ller+GmbH&amount=10.00'", "/pay") for byte in ("FC", "E4")]
    assert sent == ["status 404", "failed"]  # other bytes, another key: asked again (and rejected)
    assert [h.path for h in site.posts()] == ["/pay"]
    assert shown(human)[0][1].endswith(") M\\xfcller GmbH") and shown(human, 1)[0][1].endswith(
        ") M\\xe4ller GmbH"
    )
    assert any("could not be read exactly" in f for f in human.requests[0].flags)
    human.assert_complete()


@pytest.mark.browser
def test_in_chromium_bodies_a_browser_writes_are_read_exactly_and_not_flagged(
    make_session: SessionFactory, site: RecordingSite
) -> None:
    human = ScriptedHuman([ApprovalDecision.reject()] * 3)
    session = make_session(human=human)
    session.goto(site.page("fetch.html"))
    script = """() => {
      const form = new FormData();
      form.append('amount', '95.00');
      form.append('Empfänger', 'Müller GmbH');
      form.append('doc', new File(['%PDF-'], 'Rechnung-ä.pdf', {type: 'application/pdf'}));
      const send = (body) => fetch('/record/api', {method: 'POST', body}).then(() => 'sent', () => 'failed');
      return Promise.all([send(form), send(new URLSearchParams({amount: '95.00', payee: 'Müller & Co'})),
                          send(JSON.stringify({lines: [{amount: 95}]}))]);
    }"""
    assert session.run(lambda page: page.evaluate(script)) == ["failed"] * 3
    asked = {str(shown(human, i)): human.requests[i].flags for i in range(3)}
    form = [("amount", "95.00"), ("Empfänger", "Müller GmbH"), ("doc", file_value("Rechnung-ä.pdf", 5))]
    assert asked.pop(str(form)) == []  # multipart, as Chromium writes it: every part, no flag
    assert asked.pop(str([("amount", "95.00"), ("payee", "Müller & Co")])) == []
    ((text, why),) = asked.items()  # a string body: Chromium calls it text/plain
    assert "(body)" in text and '{"lines":[{"amount":95}]}' in text and "could not be read exactly" in why[0]
    human.assert_complete()
