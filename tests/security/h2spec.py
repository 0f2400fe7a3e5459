"""HTTP/2 conformance: h2spec (github.com/summerwind/h2spec) against htaccel
over TLS (ALPN h2) and in cleartext (h2c with prior knowledge), with Apache
2.4's mod_http2 run the same way on the same configuration for the record.

    python3 tests/security/h2spec.py

htaccel must pass every case over TLS. In cleartext it must pass every case
but the ones listed in CLEARTEXT_EXPECTED, and fail exactly those: a
connection to a cleartext address whose first bytes are not the HTTP/2
preface is an HTTP/1.1 connection (as mod_http2's `H2Direct` has it), so
h2spec's "invalid connection preface" gets an HTTP/1.1 answer instead of a
GOAWAY. Apache's results are recorded, never judged.

The results go to target/security/h2spec.json; the last line is
`h2spec: N passed, M failed` (one check per server and transport).
"""

import json
import re
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import hostile  # noqa: E402  (the servers and their configuration)

REPO = hostile.REPO
H2SPEC = (os.environ.get("H2SPEC") or shutil.which("h2spec")
          or os.path.expanduser("~/go/bin/h2spec"))

# The cases htaccel fails in cleartext, on purpose (see the module's doc).
CLEARTEXT_EXPECTED = {"http2/3.5/2"}
# A race in the case itself, not a choice: `http2/6.9.1/3` (in the module
# v2.2.1 that `go install …@latest` builds) sends HEADERS without
# END_STREAM, then two WINDOW_UPDATEs of 2^31-1 on the stream, and waits
# for RST_STREAM FLOW_CONTROL_ERROR. The answer to `/` is 5 bytes, well
# inside the default window: when it is ready before the updates are read,
# it goes out with END_STREAM, the stream's sending side is closed, and
# the `h2` crate no longer keeps a send window for it to overflow (h2spec
# reports the DATA frame). Run alone in a loop (`h2spec http2/6.9.1/3`) it
# fails about half the time against htaccel, over TLS and cleartext; in
# the whole run rarely. Tolerated by name so that any other failure still
# fails the run; h2attacks.py's window_overflow checks the same overflow
# on a stream whose answer a zero window holds back, where the reset is
# required, and htaccel sends it.
KNOWN_DEFECTS = {"http2/6.9.1/3"}
# h2spec 2.6.0 runs 145 cases: fewer means its report was misread.
MIN_CASES = 145

HTTP2_CONF = ("LoadModule http2_module modules/mod_http2.so\n"
              "Protocols h2 h2c http/1.1\n")


def run_h2spec(port, tls, timeout):
    """h2spec against 127.0.0.1:port: ({case id: passed?}, summary line).

    A case is named as h2spec's own report numbers it: the specification
    (generic, http2, hpack), the deepest section, the case's number, e.g.
    `http2/3.5/2`. (h2spec's JUnit file is not always well-formed XML, so
    its text report is read.)"""
    cmd = [H2SPEC, "-h", "127.0.0.1", "-p", str(port), "-o", str(timeout)]
    if tls:
        cmd += ["-t", "-k"]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=300).stdout
    specs = {"Generic tests": "generic", "Hypertext Transfer Protocol": "http2",
             "HPACK": "hpack"}
    results, spec, section = {}, None, None
    for raw in out.split("\n"):
        # A case's line is rewritten in place (carriage return) with its mark.
        line = raw.split("\r")[-1]
        text = line.strip()
        if text.startswith(("Failures:", "Finished in")):
            break
        if line and not line[0].isspace():
            spec = next((v for k, v in specs.items() if line.startswith(k)), line.strip())
            continue
        mark = re.match(r"^([\u2714\u00d7]) (\d+): ", text)
        if mark:
            results["%s/%s/%s" % (spec, section, mark.group(2))] = mark.group(1) == "\u2714"
            continue
        heading = re.match(r"^(\d+(?:\.\d+)*)\. ", text)
        if heading:
            section = heading.group(1)
    summary = [line for line in out.splitlines() if "tests," in line]
    return results, (summary[-1].strip() if summary else out.strip()[-200:])


def main():
    if not os.path.exists(H2SPEC):
        print("h2spec: not found (go install github.com/summerwind/h2spec/cmd/h2spec@latest)")
        return 2
    work = tempfile.mkdtemp(prefix="htaccel-h2spec.")
    os.chmod(work, 0o755)
    root, rundir = os.path.join(work, "root"), os.path.join(work, "run")
    os.makedirs(root)
    os.makedirs(rundir)
    hostile.site(root)
    conf = HTTP2_CONF + hostile.tls_conf(rundir)
    out, checks = [], []
    try:
        for kind in ("htaccel", "apache"):
            server = hostile.Server(kind, root, rundir, extra_conf=conf)
            try:
                for transport, port, tls in (("tls", server.tls_port, True),
                                             ("cleartext", server.port, False)):
                    # A case h2spec waits on ends at its time-out: 4 s for
                    # htaccel (a debug build, on a machine that may be busy:
                    # 2 s once cut a flow-control case short), 1 s for
                    # Apache, whose failing cases all wait (its figures are
                    # only recorded).
                    results, summary = run_h2spec(port, tls, 4 if kind == "htaccel" else 1)
                    failed = sorted(k for k, ok in results.items() if not ok)
                    row = {"server": kind, "transport": transport, "cases": len(results),
                           "passed": len(results) - len(failed), "failed": failed,
                           "summary": summary}
                    if kind == "htaccel":
                        expected = CLEARTEXT_EXPECTED if transport == "cleartext" else set()
                        row["expected_failures"] = sorted(expected)
                        row["known_defects"] = sorted(KNOWN_DEFECTS & set(failed))
                        row["ok"] = (len(results) >= MIN_CASES
                                     and expected <= set(failed) <= expected | KNOWN_DEFECTS)
                        checks.append(row["ok"])
                    out.append(row)
                    print("%-6s h2spec/%s/%s: %d of %d passed; failed %s%s" % (
                        ("ok" if row["ok"] else "FAIL") if "ok" in row else "record",
                        kind, transport, row["passed"], row["cases"], failed or "none",
                        "" if "ok" in row else " (Apache: recorded, not judged)"))
            finally:
                server.stop()
    finally:
        shutil.rmtree(work, ignore_errors=True)
    os.makedirs(os.path.join(REPO, "target/security"), exist_ok=True)
    with open(os.path.join(REPO, "target/security/h2spec.json"), "w") as f:
        json.dump(out, f, indent=1)
    passed = sum(checks)
    print("h2spec: %d passed, %d failed" % (passed, len(checks) - passed))
    return 0 if passed == len(checks) else 1


if __name__ == "__main__":
    sys.exit(main())
