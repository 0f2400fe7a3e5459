"""Writes docs/security.md from what the security suite measured in this
run, so that the page can never claim more than was checked:

  target/security/difftest.json  the differential run (difftest --summary-json):
                                 the security/ and protocol/ cases, answers
                                 compared with Apache's, secret markers leaked
  target/security/hostile.json   tests/security/hostile.py: bounds on time and
                                 memory, htaccel's and Apache's figures
  target/security/testssl.json   tests/security/testssl.py: testssl.sh's
                                 findings for htaccel and Apache on the
                                 same TLS configuration
  target/security/h2spec.json    tests/security/h2spec.py: h2spec's HTTP/2
                                 conformance cases, htaccel's and Apache's
  target/security/h2attacks.json tests/security/h2attacks.py: the HTTP/2
                                 denial-of-service patterns, bounds and
                                 figures as in hostile.json
  target/security/fuzz.json      scripts/fuzz.sh: inputs run per target

    python3 scripts/security_report.py [OUTPUT]   (default docs/security.md)

A part that did not run in this run is said to be missing, not left out.
"""

import json
import os
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(REPO, "docs/security.md")
DIR = os.path.join(REPO, "target/security")
GROUPS = ("security/", "protocol/")


def load(name):
    try:
        with open(os.path.join(DIR, name)) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def cell(v):
    return str(v).replace("|", "\\|").replace("\n", " ")


def figures(d):
    if not d:
        return "not measured"
    return ", ".join("%s %s" % (k.replace("_", " "), json.dumps(v)) for k, v in d.items())


SEVERITIES = ("CRITICAL", "HIGH", "MEDIUM", "LOW", "WARN")


def by_severity(findings):
    """`HIGH 2 (id, id)`, most severe first, for LOW and above and WARN."""
    ids = {}
    for f in findings:
        ids.setdefault(f["severity"], []).append(f["id"])
    shown = ["%s %d (%s)" % (s, len(ids[s]), ", ".join(ids[s])) for s in SEVERITIES if s in ids]
    return "; ".join(shown) or "none of LOW or above"


def testssl_section(testssl):
    out = ["", "## testssl.sh", "",
           "`tests/security/testssl.py`: Debian's testssl.sh (protocols, each cipher,",
           "forward secrecy, server preferences and defaults, HTTP headers,",
           "vulnerabilities) against htaccel and Apache with mod_ssl, both on the same",
           "configuration text and certificate. A finding of htaccel of LOW or above,",
           "or VULNERABLE, that Apache's run does not have as severe under the same id",
           "is a failure (a check that could not finish against htaccel alone, WARN, is",
           "listed without failing). Findings by severity with their testssl.sh ids",
           "(INFO and OK left out); what both servers share comes from the self-signed",
           "test certificate, `SSLHonorCipherOrder off` and a test site that sends no",
           "HSTS or other security headers:", ""]
    if testssl is None:
        return out + ["Missing: testssl.sh did not run."]
    out += ["| Configuration | htaccel | Apache | htaccel only |", "| --- | --- | --- | --- |"]
    for c in testssl["configurations"]:
        only = "; ".join(("%s %s: %s (not a failure)" if f["severity"] == "WARN" else "**%s %s**: %s")
                         % (f["severity"], f["id"], cell(f["finding"]))
                         for f in c["htaccel_only"]) or "none"
        if c["error"]:
            only = "**not checked** (%s)" % cell(c["error"])
        out.append("| %s | %s | %s | %s |" % (
            cell(c["what"]), cell(by_severity(c["findings"]["htaccel"])),
            cell(by_severity(c["findings"]["apache"])), only))
    out += ["", "testssl.sh %s. Differences left out because the two servers are different "
            "programs: %s." % (testssl.get("testssl") or "(version unknown)", "; ".join(
                "`%s`: %s" % (k, v) for k, v in testssl["ignored"].items()))]
    return out


def http2_section(h2spec, attacks):
    out = ["", "## HTTP/2", "",
           "`tests/security/h2spec.py`: h2spec's conformance cases against htaccel and,",
           "for the record, Apache's mod_http2, over TLS (ALPN `h2`) and in cleartext",
           "(`h2c` with prior knowledge), on the same configuration. htaccel must pass",
           "every case over TLS, and in cleartext every case but `http2/3.5/2`: a",
           "cleartext connection whose first bytes are not the HTTP/2 preface is",
           "served as HTTP/1.1, as `H2Direct` has it.", ""]
    if h2spec is None:
        out.append("Missing: h2spec did not run.")
    else:
        out += ["| Server | Transport | Passed | Failed cases | Met |", "| --- | --- | ---: | --- | --- |"]
        for r in h2spec:
            met = ("yes" if r["ok"] else "**no**") if "ok" in r else "(recorded)"
            out.append("| %s | %s | %d of %d | %s | %s |" % (
                r["server"], r["transport"], r["passed"], r["cases"],
                ", ".join("`%s`" % c for c in r["failed"]) or "none", met))
    out += ["", "`tests/security/h2attacks.py`: the known HTTP/2 denial-of-service patterns,",
            "each attack run for a few seconds by raw-frame clients while a second,",
            "well-behaved connection asks for a page every 20 ms; figures as above",
            "(server CPU seconds during the attack, peak memory growth, the normal",
            "client's p99 and failures), Apache's beside htaccel's. GOAWAY and",
            "RST_STREAM codes are RFC 9113's numbers (1 PROTOCOL_ERROR, 3",
            "FLOW_CONTROL_ERROR, 7 REFUSED_STREAM, 8 CANCEL, 9 COMPRESSION_ERROR,",
            "11 ENHANCE_YOUR_CALM).", ""]
    if attacks is None:
        out.append("Missing: the HTTP/2 attacks did not run.")
    else:
        out += ["| Attack | Bound | Met | htaccel | Apache |", "| --- | --- | --- | --- | --- |"]
        for s in attacks:
            met = "yes" if s["ok"] else "**no**" + (" (%s)" % cell(s["error"]) if s["error"] else "")
            out.append("| %s | %s | %s | %s | %s |" % (
                cell(s["what"]), cell(s["bound"]), met, cell(figures(s["htaccel"])),
                cell(figures(s["apache"]))))
    return out


def main():
    diff = load("difftest.json")
    hostile = load("hostile.json")
    fuzz = load("fuzz.json")
    testssl = load("testssl.json")
    out = [
        "# Security suite",
        "",
        "Generated by `scripts/security_report.py` from the measurements of the last",
        "run of the suite (`scripts/test.sh` runs it in a bounded form; the whole",
        "campaign is `scripts/security.sh --full`); do not edit by hand.",
        "",
        "## Requests compared with Apache",
        "",
        "Each case is served by Apache 2.4 and by htaccel from the same tree; every",
        "request goes to both and the answers are compared as a client sees them.",
        "Cases with a `secrets` file plant marker strings in files no client may",
        "read (access files, password files, denied directories, files outside the",
        "document root), and any htaccel answer carrying one is a leak whatever",
        "Apache answered. In `security/smuggling` the requests reach a naive back",
        "end (no framing checks) behind `ProxyPass`; a smuggled request marks every",
        "later answer of the back end, so a desync is a leak there, and a different",
        "answer sequence is a desync from Apache.",
        "",
    ]
    leaks = desyncs = sent = 0
    if diff is None:
        out.append("Missing: the differential run wrote no summary.")
    else:
        out += ["| Case | What it checks | Requests | Identical to Apache | Leaks | Differing |",
                "| --- | --- | ---: | ---: | ---: | ---: |"]
        for c in diff:
            if not c["name"].startswith(GROUPS):
                continue
            sent += c["requests"]
            leaks += c["leaks"]
            if c["name"].startswith("security/smuggling"):
                desyncs += c["differing"]
            note = " (not run: %s)" % c["error"] if c["error"] else ""
            out.append("| %s | %s%s | %d | %d | %d | %d |" % (
                c["name"], cell(c["readme"]), cell(note), c["requests"], c["identical"],
                c["leaks"], c["differing"]))
        scale = diff[0]["scale"] if diff else "1"
        repeat = diff[0]["repeat"] if diff else 1
        out += ["",
                "%d requests in these cases (generated sets at DIFFTEST_SCALE=%s; GET and "
                "HEAD sent %d times to htaccel): **%d leaks, %d desyncs**." % (
                    sent, scale, repeat, leaks, desyncs)]
        classes = {}
        for c in diff:
            if c["name"].startswith(GROUPS):
                for k, n in c.get("classes", {}).items():
                    classes[k] = classes.get(k, 0) + n
        out += ["", "Differences from Apache by class (requests whose answers differed in "
                "that respect): " + (", ".join("%s %d" % (k, n) for k, n in sorted(classes.items()))
                                     if classes else "none") + "."]
    out += ["", "## Hostile access files, clients and faults", "",
            "`tests/security/hostile.py`: each scenario with its bound; htaccel must meet",
            "it, Apache's figures (same tree, the oracle configuration) are beside them.",
            "Times are seconds, memory is the growth of resident memory of all the",
            "server's processes, in MiB. htaccel is the debug build the test suite",
            "runs, so its CPU figures are not a benchmark (bench/ measures release",
            "builds).", ""]
    if hostile is None:
        out.append("Missing: the hostile scenarios did not run.")
    else:
        out += ["| Scenario | Bound | Met | htaccel | Apache |", "| --- | --- | --- | --- | --- |"]
        for s in hostile:
            met = "yes" if s["ok"] else "**no**" + (" (%s)" % cell(s["error"]) if s["error"] else "")
            out.append("| %s | %s | %s | %s | %s |" % (
                cell(s["what"]), cell(s["bound"]), met, cell(figures(s["htaccel"])),
                cell(figures(s["apache"]) if s["apache"] else "not run (it would block)")))
        full = any(s.get("full") for s in hostile)
        out += ["", "Sizes of the %s run." % ("full (`--full`)" if full else "bounded (CI)")]
    out += testssl_section(testssl)
    out += http2_section(load("h2spec.json"), load("h2attacks.json"))
    out += ["", "## Fuzzing", "",
            "`scripts/fuzz.sh`: each cargo-fuzz target from its committed seeds",
            "(`fuzz/seeds/`), no crash and no time-out allowed.", ""]
    if fuzz is None:
        out.append("Missing: the fuzz targets did not run.")
    else:
        out += ["| Target | Seconds | Inputs run | Corpus | Crashed |", "| --- | ---: | ---: | ---: | --- |"]
        for t in fuzz:
            out.append("| %s | %d | %d | %d | %s |" % (
                t["target"], t["seconds"], t["runs"], t["corpus"], "**yes**" if t["crashed"] else "no"))
    out.append("")
    text = "\n".join(out)
    try:
        if open(OUT).read() == text:
            return 0
    except OSError:
        pass
    with open(OUT, "w") as f:
        f.write(text)
    print("security report written to %s" % os.path.relpath(OUT, REPO))
    return 0


if __name__ == "__main__":
    sys.exit(main())
