#!/usr/bin/env python3
"""Load a self-contained HTML page in headless chromium and check it ran cleanly.

Usage: browser.py [--timeout SEC] [--screenshot PNG [--size WxH]] PAGE.html [STEPS.js]

Drives the browser through the DevTools protocol over --remote-debugging-pipe
(standard library only).  Fails (status 1, one line "browser: <what>" on
stderr) when the page opens a dialog (alert/confirm/prompt), throws an
uncaught exception, logs console.error, fails to load, or --timeout expires.
Status 2 for bad usage, 3 when no browser is installed (callers skip).

STEPS.js runs in the page after load as a block that may use `await`; its
completion value (its last statement's, as in a console) is printed as one
line of JSON.  Helpers: sleep(ms); click(target) and hover(target), real mouse
input (move, press, release) at the centre of a CSS selector's or an Element's
box, awaiting its handlers.  The browser is $LEAKSNAP_BROWSER, else the first
of chromium, /usr/lib/chromium/chromium, chromium-browser, google-chrome.
"""
import argparse, base64, fcntl, json, math, os, pathlib  # noqa: E401
import select, shutil, signal, sys, tempfile, time  # noqa: E401

CANDIDATES = ["chromium", "/usr/lib/chromium/chromium", "chromium-browser", "google-chrome"]
BINDING = "__leaksnapInput"  # page -> driver: "dispatch this mouse input"
SIGNALS = (signal.SIGTERM, signal.SIGHUP, signal.SIGINT)

# Installed in the page before STEPS runs.  click/hover cannot produce real
# input from inside the page, so they send the element's centre to the driver
# through the binding (a Runtime.bindingCalled event), and the driver resolves
# the promise with __leaksnap.done() once Input.dispatchMouseEvent returned,
# i.e. once the page's event handlers ran.
HELPERS = r"""
globalThis.__leaksnap = (() => {
  const send = globalThis.%(binding)s, waiting = new Map();
  let seq = 0;
  const input = (kind, target) => new Promise(resolve => {  // a throw here rejects
    const el = typeof target === 'string' ? document.querySelector(target) : target;
    if (!(el instanceof Element)) throw new Error(kind + ': no element matches ' + String(target));
    el.scrollIntoView({block: 'center', inline: 'center', behavior: 'instant'});
    const r = el.getBoundingClientRect(), id = ++seq;
    if (!(r.width > 0 && r.height > 0)) throw new Error(kind + ': ' + String(target) + ' has no box');
    waiting.set(id, resolve);
    send(JSON.stringify({id, kind, x: r.left + r.width / 2, y: r.top + r.height / 2}));
  });
  return {
    sleep: ms => new Promise(resolve => setTimeout(resolve, ms)),
    click: target => input('click', target), hover: target => input('hover', target),
    done(id) {  // called by the driver once the input was dispatched
      const resolve = waiting.get(id);
      waiting.delete(id);
      if (resolve) resolve();
    }};
})();
""" % {"binding": BINDING}


class Fail(Exception):
    """A failed check; browser_log: also show the tail of the browser's stderr."""

    def __init__(self, what, browser_log=False):
        super().__init__(what)
        self.browser_log = browser_log


def find_browser():
    env = os.environ.get("LEAKSNAP_BROWSER")
    for name in [env] if env else CANDIDATES:
        path = shutil.which(name)
        if path:
            return path
    where = "$LEAKSNAP_BROWSER=%s is not executable; " % env if env else ""
    sys.stderr.write("browser: no browser found (%sapt-get install chromium)\n" % where)
    sys.exit(3)


class Browser:
    """One chromium process and a DevTools session on one page target."""

    def __init__(self, binary, timeout, workdir):
        self.timeout = timeout
        self.deadline = time.monotonic() + timeout
        self.phase = "starting the browser"
        self.session = None
        self.next_id = 0
        self.replies = {}       # id -> reply not yet collected by call()
        self.bindings = []      # Runtime.bindingCalled payloads to serve
        self.loaded = False     # Page.loadEventFired seen since navigate
        self.buf = b""
        self.log = os.path.join(workdir, "stderr")
        # Two pipes; the child gets the read end of `cmd` as fd 3 and the
        # write end of `evt` as fd 4.  Keep our copies above 10, so the
        # dup2 to 3 and 4 in the child never clobbers a pipe it still needs.
        cmd_r, cmd_w = os.pipe()
        evt_r, evt_w = os.pipe()
        high = [fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 10) for fd in (cmd_r, evt_w)]
        for fd in (cmd_r, evt_w):
            os.close(fd)
        actions = [(os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0),
                   (os.POSIX_SPAWN_OPEN, 1, os.devnull, os.O_WRONLY, 0),
                   (os.POSIX_SPAWN_OPEN, 2, self.log, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600),
                   (os.POSIX_SPAWN_DUP2, high[0], 3),   # dup2 clears close-on-exec
                   (os.POSIX_SPAWN_DUP2, high[1], 4)]
        argv = [binary, "--headless", "--no-sandbox", "--disable-gpu",
                "--remote-debugging-pipe", "--user-data-dir=" + os.path.join(workdir, "profile"),
                "--no-first-run", "--no-default-browser-check", "about:blank"]
        # A process group of its own: kill() takes the renderers with it.
        # Its TMPDIR is ours too: what it leaves there goes with workdir.
        env = dict(os.environ, TMPDIR=workdir)
        self.pid = os.posix_spawn(binary, argv, env, file_actions=actions, setpgroup=0)
        for fd in high:
            os.close(fd)
        self.out, self.inp = cmd_w, evt_r
        os.set_blocking(self.inp, False)

    def kill(self):
        if self.pid:
            os.killpg(self.pid, signal.SIGKILL)   # the group outlives its leader: no race
            os.waitpid(self.pid, 0)
            self.pid = None
        for fd in (self.out, self.inp):
            os.close(fd)

    def log_tail(self, n=20):
        with open(self.log, errors="replace") as f:
            return f.read().splitlines()[-n:]

    def send(self, method, params=None):
        self.next_id += 1
        msg = {"id": self.next_id, "method": method, "params": params or {}}
        if self.session:    # flat mode: commands to the page carry its session
            msg["sessionId"] = self.session
        data = json.dumps(msg).encode() + b"\0"
        try:
            while data:
                data = data[os.write(self.out, data):]
        except BrokenPipeError:
            raise Fail("the browser closed its pipe (%s)" % self.phase, True)
        return self.next_id

    def check_time(self):
        """Seconds left before the deadline; Fail when there are none."""
        left = self.deadline - time.monotonic()
        if left <= 0:   # before a page session, the browser itself is stuck
            raise Fail("timed out after %g s (%s)" % (self.timeout, self.phase), not self.session)
        return left

    def read(self):
        """Return the next message from the browser; Fail at the deadline."""
        while b"\0" not in self.buf:
            if not select.select([self.inp], [], [], self.check_time())[0]:
                self.check_time()
                continue
            chunk = os.read(self.inp, 1 << 16)
            if not chunk:
                raise Fail("the browser exited (%s)" % self.phase, True)
            self.buf += chunk
        msg, self.buf = self.buf.split(b"\0", 1)
        return json.loads(msg)

    def pump(self):
        """Read one message: keep a reply for call(), act on an event."""
        msg = self.read()
        if "id" in msg:
            self.replies[msg["id"]] = msg
            return
        if msg.get("sessionId") != self.session:
            return      # browser-level events, other targets
        method, p = msg.get("method"), msg.get("params", {})
        if method == "Page.loadEventFired":
            self.loaded = True
        elif method == "Page.javascriptDialogOpening":
            # The page is blocked until the dialog is handled; dismiss it
            # without waiting for the reply: the browser is killed next.
            self.send("Page.handleJavaScriptDialog", {"accept": False})
            raise Fail("%s dialog opened: %s" % (p.get("type"), one_line(p.get("message", ""))))
        elif method == "Runtime.exceptionThrown":
            raise Fail("uncaught exception: %s" % describe(p.get("exceptionDetails", {})))
        elif method == "Runtime.consoleAPICalled" and p.get("type") == "error":
            text = " ".join(remote_text(a) for a in p.get("args", []))
            raise Fail("console.error: %s" % one_line(text))
        elif method == "Runtime.bindingCalled" and p.get("name") == BINDING:
            self.bindings.append(p)
        elif method == "Inspector.targetCrashed":
            raise Fail("the page crashed (%s)" % self.phase, True)

    def call(self, method, params=None):
        """Send a command and return its result; Fail on a protocol error."""
        mid = self.send(method, params)
        while mid not in self.replies:
            self.pump()
        reply = self.replies.pop(mid)
        if "error" in reply:
            raise Fail("%s: %s" % (method, reply["error"].get("message")), True)
        return reply.get("result", {})

    def evaluate(self, expr):
        r = self.call("Runtime.evaluate", {"expression": expr, "returnByValue": True})
        if "exceptionDetails" in r:
            raise Fail("%s: %s" % (self.phase, describe(r["exceptionDetails"])))
        return r["result"].get("value")

    def open_page(self):
        # The tab the browser opened at startup (its renderer is already on
        # its way: quicker), else a new one.  Attaching with flatten: true
        # multiplexes the tab's session on this pipe (messages carry sessionId).
        pages = [t["targetId"] for t in self.call("Target.getTargets")["targetInfos"]
                 if t["type"] == "page"]
        target = pages[0] if pages else \
            self.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        self.session = self.call("Target.attachToTarget",
                                 {"targetId": target, "flatten": True})["sessionId"]
        for domain in ("Page", "Runtime", "Inspector"):
            self.call(domain + ".enable")

    def load(self, url):
        self.phase = "loading " + url
        self.loaded = False
        nav = self.call("Page.navigate", {"url": url})
        if nav.get("errorText"):
            raise Fail("cannot load %s: %s" % (url, nav["errorText"]))
        # Page.loadEventFired has no frame or loader id.  A late one from
        # about:blank would be harmless: we also wait until the document
        # itself is complete and is the file, no longer about:blank.
        self.phase = "waiting for the load event"
        while not self.loaded:
            self.pump()
        self.phase = "waiting for document.readyState"
        while self.evaluate("document.readyState + ' ' + location.protocol") != "complete file:":
            time.sleep(min(0.02, self.check_time()))

    def run_steps(self, steps):
        self.call("Runtime.addBinding", {"name": BINDING})
        self.phase = "installing the STEPS helpers"
        self.evaluate(HELPERS)
        # A block in REPL mode: top-level await works, its completion value is
        # the result, and the helpers shadow any page globals of those names.
        # The newline before "}" ends a trailing // comment in STEPS.
        expr = "{ const {sleep, click, hover} = globalThis.__leaksnap;\n%s\n}" % steps
        self.phase = "running STEPS"
        mid = self.send("Runtime.evaluate", {"expression": expr, "replMode": True,
                                             "awaitPromise": True, "returnByValue": True})
        while mid not in self.replies:
            self.pump()
            while self.bindings:
                self.serve_input(self.bindings.pop(0))
        reply = self.replies.pop(mid)
        r = reply.get("result", {})     # an error: e.g. a value not JSON-able
        if "error" in reply or "exceptionDetails" in r:
            raise Fail("STEPS: %s" % (reply["error"].get("message") if "error" in reply
                                      else describe(r["exceptionDetails"], steps=True)))
        return r["result"].get("value")

    def serve_input(self, call):
        req = json.loads(call["payload"])
        # mouseMoved first, so hover handlers run as for a real pointer.  Each
        # reply comes once the page handled the event; a dialog a handler
        # opens arrives as an event meanwhile, and fails the run.
        events = [("mouseMoved", "none", 0)]
        if req["kind"] == "click":
            events += [("mousePressed", "left", 1), ("mouseReleased", "left", 0)]
        for kind, button, buttons in events:
            self.call("Input.dispatchMouseEvent", {"type": kind, "x": req["x"], "y": req["y"],
                      "button": button, "buttons": buttons, "clickCount": 1})
        # Settle the page's promise in the context that asked.
        self.call("Runtime.evaluate", {"contextId": call["executionContextId"],
                  "expression": "globalThis.__leaksnap.done(%d)" % req["id"]})

    def screenshot(self, path, width, height):
        self.phase = "taking the screenshot"
        # captureBeyondViewport alone still clips to the viewport: ask for
        # the whole document's size explicitly (never less than the viewport).
        size = self.call("Page.getLayoutMetrics")["cssContentSize"]
        clip = {"x": 0, "y": 0, "scale": 1, "width": max(width, math.ceil(size["width"])),
                "height": max(height, math.ceil(size["height"]))}
        data = self.call("Page.captureScreenshot", {"format": "png", "clip": clip,
                                                    "captureBeyondViewport": True})["data"]
        fd, tmp = tempfile.mkstemp(dir=os.path.dirname(os.path.abspath(path)), suffix=".png")
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(base64.b64decode(data))
            os.replace(tmp, path)   # a reader never sees half a PNG
        except BaseException:
            os.unlink(tmp)
            raise


def one_line(text):
    return " ".join(str(text).split())


def remote_text(obj):
    """A console argument (a Runtime.RemoteObject) as text."""
    if "value" in obj:
        return obj["value"] if isinstance(obj["value"], str) else json.dumps(obj["value"])
    return obj.get("description") or obj.get("unserializableValue") or obj.get("type", "?")


def describe(details, steps=False):
    """Runtime.ExceptionDetails as "message (url line N)"; lines are 0-based."""
    exc = details.get("exception", {})
    text = exc.get("description") or exc.get("value") or details.get("text", "exception")
    text = str(text).split("\n    at ")[0]     # the message without the stack
    if steps:
        # REPL mode shifts details' own line; the outermost stack frame is
        # the STEPS block, whose line 0 is the wrapper: so N is STEPS' line.
        frames = details.get("stackTrace", {}).get("callFrames", [])
        if frames and not frames[-1].get("url"):
            return one_line("%s (STEPS line %d)" % (text, frames[-1]["lineNumber"]))
        return one_line(text)
    where = details.get("url") or ""
    return one_line("%s (%sline %d)" % (text, where + " " if where else "",
                                         details.get("lineNumber", 0) + 1))


def on_signal(signum, frame):
    raise Fail("killed by signal %d" % signum)


def parse_args():
    ap = argparse.ArgumentParser(prog="browser.py", description=__doc__.split("\n\n")[0])
    ap.add_argument("--timeout", type=float, default=30, help="overall limit (default 30 s)")
    ap.add_argument("--screenshot", metavar="PNG", help="write a full-page PNG after the steps")
    ap.add_argument("--size", default="1280x900", metavar="WxH", help="viewport (1280x900)")
    ap.add_argument("page", metavar="PAGE.html")
    ap.add_argument("steps", metavar="STEPS.js", nargs="?")
    args = ap.parse_args()
    size = args.size.lower().split("x")
    if len(size) != 2 or not all(v.isdigit() and 0 < int(v) <= 10000 for v in size):
        ap.error("--size %s: expected WxH, e.g. 1280x900" % args.size)
    args.width, args.height = int(size[0]), int(size[1])
    if args.timeout <= 0:
        ap.error("--timeout must be positive")
    if not (os.path.isfile(args.page) and os.access(args.page, os.R_OK)):
        ap.error("%s: not a readable file" % args.page)
    try:
        args.steps = open(args.steps, encoding="utf-8").read() if args.steps else None
    except (OSError, ValueError) as e:
        ap.error("%s: %s" % (args.steps, e))
    return args


def main():
    args = parse_args()
    binary = find_browser()
    url = pathlib.Path(os.path.abspath(args.page)).as_uri()
    # SIGTERM (e.g. from timeout(1)) must still reach the finally below.
    for sig in SIGNALS:
        signal.signal(sig, on_signal)
    # Short: the browser's TMPDIR, where it makes a unix socket (108 bytes).
    workdir = tempfile.mkdtemp(prefix="lsb.")
    browser = None
    try:
        browser = Browser(binary, args.timeout, workdir)
        browser.open_page()
        if args.screenshot:
            browser.call("Emulation.setDeviceMetricsOverride", {"width": args.width,
                         "height": args.height, "deviceScaleFactor": 1, "mobile": False})
        browser.load(url)
        if args.steps is not None:
            value = browser.run_steps(args.steps)
            sys.stdout.write(json.dumps(value) + "\n")
        if args.screenshot:
            browser.screenshot(args.screenshot, args.width, args.height)
        return 0
    except Fail as e:
        sys.stderr.write("browser: %s\n" % one_line(e))
        if e.browser_log and browser:
            for line in browser.log_tail():
                sys.stderr.write("  | %s\n" % line)
        return 1
    finally:
        for sig in SIGNALS:
            signal.signal(sig, signal.SIG_IGN)     # let the cleanup finish
        if browser:
            browser.kill()
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    try:
        sys.exit(main())
    except OSError as e:   # spawning, the screenshot file, ...
        sys.stderr.write("browser: %s\n" % e)
        sys.exit(1)
