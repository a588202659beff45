#!/usr/bin/env python3
"""A scripted web browser for the single sign-on tests of MGDS Desktop and `mgds login --sso`.

The app opens it as the system browser ($BROWSER) with the provider's sign-in address. It
follows the provider's pages as a person would: signs in as $MGDS_TEST_OIDC_ACCOUNT on the
sign-in form (any password: the test provider's development sign-in), consents where asked,
and follows the provider back to the app's loopback listener, whose page it reads. Cookies are
kept for the run. It prints what it did to stderr and exits 1 when a page is not one it knows.
"""

import html.parser
import http.cookiejar
import os
import sys
import urllib.error
import urllib.parse
import urllib.request


class Forms(html.parser.HTMLParser):
    """The forms of a page: (action, method, {name: value})."""

    def __init__(self):
        super().__init__()
        self.forms = []
        self._open = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "form":
            self._open = (a.get("action") or "", (a.get("method") or "get").lower(), {})
            self.forms.append(self._open)
        elif tag in ("input", "button") and self._open is not None and a.get("name"):
            if tag == "input" and a.get("type") in ("checkbox", "radio") and "checked" not in a:
                return
            self._open[2].setdefault(a["name"], a.get("value") or "")

    def handle_endtag(self, tag):
        if tag == "form":
            self._open = None


def main():
    url = sys.argv[-1]
    account = os.environ.get("MGDS_TEST_OIDC_ACCOUNT", "")
    opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar()))
    request = urllib.request.Request(url)
    for _ in range(20):
        try:
            response = opener.open(request, timeout=30)
        except urllib.error.HTTPError as e:
            response = e
        page = response.read().decode("utf-8", "replace")
        at = urllib.parse.urlsplit(response.geturl())
        if at.hostname == "127.0.0.1" and at.path == "/callback":
            print(f"browser: back at the app ({response.status})", file=sys.stderr)
            return 0
        forms = Forms()
        forms.feed(page)
        posts = [f for f in forms.forms if f[1] == "post"]
        if not posts:
            print(f"browser: stopped at {response.geturl()} ({response.status}): {page[:500]}", file=sys.stderr)
            return 1
        action, _, fields = posts[0]
        if "login" in fields:
            fields["login"] = account
            fields["password"] = "any"
        data = urllib.parse.urlencode(fields).encode()
        request = urllib.request.Request(urllib.parse.urljoin(response.geturl(), action), data=data)
    print("browser: too many pages", file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main())
