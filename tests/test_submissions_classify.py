"""``submissions.classify``: a submission the system applied is not reported as not saved.

- A "Save & New" answer (200, "Bill BILL-0012 saved." above a fresh form posting to the same
  address) was ``refused``: a form shown again is refused only when the page flags an error;
  without one it is ``unknown`` (held back, counted as "may be saved"), never "NOT saved".
- A 200 answer "Payment for BILL-0004 recorded." on a page with a password box (a release form)
  was ``bounced`` and the model told to sign in and send again (a second payment): bounced is only
  HTTP 401/419, a redirect to a login path, or an answer whose form is a login; any other password
  form leaves it ``unknown`` (a sign-in under other field names must not read as saved either).
"""

from __future__ import annotations

import pytest

from taskcrew.tools.submissions import classify

NEW = "http://erp.example/bills/new"
PAY = "http://erp.example/bills/BILL-0004/pay"

SAVE_AND_NEW = (
    '<html><body><div class="flash success">Bill BILL-0012 saved.</div>'
    '<h1>New bill</h1><form method="post" action="/bills/new">'
    '<input name="invoice_number" value=""><button>Save</button></form></body></html>'
)
BOOTSTRAP_SAVED = (
    '<div class="alert alert-success" role="alert">Bill BILL-0013 saved.</div>'
    '<form method="post" action="/bills/new"><input name="invoice_number"></form>'
)
RECORDED_WITH_PASSWORD = (
    "<html><body><p>Payment for BILL-0004 recorded.</p>"
    '<form method="post" action="/payments/release"><input type="password" name="password">'
    "<button>Release now</button></form></body></html>"
)
LOGIN_PAGE = (  # as the mock ERP renders it
    '<form class="logout" method="post" action="/logout"></form>'
    '<form method="post" action="/login" class="login-form" novalidate>'
    '<input type="hidden" name="csrf_token" value="x"><input type="hidden" name="next" value="/bills/new">'
    '<input type="text" id="username" name="username" autocomplete="username">'
    '<input type="password" id="password" name="password" value=""><button>Log in</button></form>'
)
EMAIL_LOGIN = (  # posts to its own address, an e-mail field beside the password
    '<form method="post" action="/auth"><input type="email" name="email">'
    '<input type="password" name="pw"><button>Continue</button></form>'
)
VALIDATION = (
    '<form method="post" action="/bills/new"><div class="error-summary" role="alert">'
    "<h2>Please correct 1 problem</h2><p>Amount must be greater than zero</p></div>"
    '<input name="amount" aria-invalid="true"></form>'
)
NEAR_DUPLICATE = (
    '<form method="post" action="/bills/new"><div class="warning" role="alert">'
    "<h2>Possible duplicate — please confirm</h2></div>"
    '<input type="checkbox" name="confirm_near_duplicate" value="yes"></form>'
)


def _classify(body: str, url: str = NEW, status: int = 200, location: str | None = None) -> tuple[str, str]:
    return classify(method="POST", url=url, http_status=status, body=body, location=location)


def test_a_save_and_new_answer_is_not_refused_but_unknown() -> None:
    assert _classify(SAVE_AND_NEW)[0] == "unknown"  # before: refused ("NOT saved")
    assert _classify(BOOTSTRAP_SAVED)[0] == "unknown"  # a success alert is no error flag


def test_a_saved_answer_with_a_password_box_is_not_bounced() -> None:
    assert _classify(RECORDED_WITH_PASSWORD, url=PAY)[0] == "unknown"  # before: bounced


@pytest.mark.parametrize(
    "body",
    [  # sign-ins under field names no rule knows: never read as saved
        '<form method="post" action="/session"><input name="account"><input type="password" name="secret"></form>',
        "<p>Your session has timed out. Enter your password to continue.</p>"
        '<form method="post" action="/unlock"><input type="password" name="password"></form>',
        '<form method="post" action="/anmelden"><input name="benutzer"><input type="password" name="kennwort"></form>',
    ],
)
def test_an_answer_asking_for_a_password_is_never_saved(body: str) -> None:
    assert _classify(body)[0] in ("unknown", "bounced")


@pytest.mark.parametrize(
    ("body", "status", "location"),
    [
        (LOGIN_PAGE, 200, None),  # a login page as the answer
        (EMAIL_LOGIN, 200, None),
        ("", 401, None),
        ("<p>Page expired</p>", 419, None),
        ("", 303, "/login?next=/bills/new"),
        ("", 302, "/users/sign_in"),
        ("", 302, "/auth/Logon.aspx?ReturnUrl=%2Fbills"),
        ("", 303, "/accounts/login/"),
        (LOGIN_PAGE, 403, None),
    ],
)
def test_a_login_is_bounced(body: str, status: int, location: str | None) -> None:
    assert _classify(body, status=status, location=location)[0] == "bounced"


def test_a_form_shown_again_with_an_error_flagged_is_refused_with_its_reason() -> None:
    assert _classify(VALIDATION) == ("refused", "Please correct 1 problem Amount must be greater than zero")
    result, detail = _classify(NEAR_DUPLICATE)
    assert result == "refused" and "Possible duplicate" in detail
    assert _classify("<p>Duplicate invoice</p>", status=409)[0] == "refused"


def test_an_answer_that_is_neither_saved_plainly() -> None:
    assert _classify("<h1>Bill BILL-0014</h1><p>Saved.</p>")[0] == "saved"
    assert _classify("", status=303, location="/bills/BILL-0014")[0] == "saved"
    assert _classify("", status=503)[0] == "unknown"


@pytest.mark.parametrize(
    "location", ["/reports/login-history", "/bills/BILL-0014?from=login", "/signin-audit/7"]
)
def test_a_page_that_only_mentions_a_login_is_no_bounce(location: str) -> None:
    # a bounce may be sent again: a saved bill whose next page names a login must not be sent twice
    assert _classify("", status=303, location=location)[0] == "saved"
