"""Browser settings: one pydantic model, passed to the runtime and the session."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, Field

SYSTEM_CHROMIUM_FLAGS = (
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-sync",
)


def lockdown_flags(proxy_port: int) -> list[str]:
    """Flags that leave the browser no way out but the network guard (see docs/security.md):
    every request Playwright does not fulfil goes to the gatekeeper proxy on ``proxy_port`` (loopback
    included), and WebRTC may not use UDP outside that proxy."""
    return [
        f"--proxy-server=http://127.0.0.1:{proxy_port}",
        "--proxy-bypass-list=<-loopback>",
        "--force-webrtc-ip-handling-policy=disable_non_proxied_udp",
        "--webrtc-ip-handling-policy=disable_non_proxied_udp",
        # No --disable-features here: Chromium keeps only the last one, and Playwright passes its own.
    ]


class BrowserConfig(BaseModel):
    """How to launch Chromium and how patient to be with pages.

    Times are in milliseconds except ``call_timeout_s`` (the bound on one call into the browser
    thread, not counting time spent waiting for a human's approval).
    """

    executable_path: Path | None = None
    """A Chromium binary to use; otherwise TASKCREW_CHROMIUM, Playwright's own build, or PATH."""
    headless: bool = True
    slow_mo_ms: int = Field(default=0, ge=0)
    viewport_width: int = Field(default=1280, ge=200)
    viewport_height: int = Field(default=800, ge=200)
    action_timeout_ms: int = Field(default=2500, ge=100)
    navigation_timeout_ms: int = Field(default=15000, ge=500)
    settle_timeout_ms: int = Field(default=3000, ge=0)
    dom_quiet_ms: int = Field(default=50, ge=0)
    typing_quiet_ms: int = Field(default=350, ge=0)
    call_timeout_s: float = Field(default=120.0, gt=0)
    max_text_chars: int = Field(default=3500, ge=200)
    max_elements: int = Field(default=150, ge=10)
    render_max_chars: int = Field(default=6000, ge=500)
    extra_args: list[str] = Field(default_factory=list)
