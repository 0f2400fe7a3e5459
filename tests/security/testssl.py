"""testssl.sh (Debian's package) against htaccel and Apache with mod_ssl on
the same configuration text and the same certificate: every finding of
htaccel that Apache's run does not have is a failure (issue 15, security by
default).

    python3 tests/security/testssl.py [--only NAME]

For each configuration below, both servers start from the oracle
configuration (`tests/oracle/serve-equivalent.conf`) plus the
configuration's TLS lines, Apache with `-f` and htaccel with `-f` on the
same text, on loopback ports; testssl.sh then runs against both at once
(protocols, each cipher, forward secrecy, the server's preferences, server
defaults, HTTP headers and the vulnerabilities; the client simulation is
left out: every finding it writes is INFO, which the comparison below
never counts, and it would lengthen each run).

A finding of htaccel counts against it when its severity is LOW or above,
or it says VULNERABLE, and Apache's finding with the same id is less severe
(or absent, or not VULNERABLE). A check testssl.sh could not finish against
htaccel alone (a WARN Apache's run lacks) is listed but does not fail: on a
loaded machine testssl.sh's own connections time out now and then.
Findings that can only differ because the two servers are different
programs are in IGNORED, each with its reason. Every run first checks the
comparison itself on made-up findings (`self_check`), so that it cannot
quietly stop finding anything.
The results go to target/security/testssl.json for docs/security.md
(scripts/security_report.py); the last line is `testssl: N passed, M failed`.

Only loopback addresses are used. Standard library only.
"""

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

# hostile.py's servers, started the same way (and no __pycache__ left behind).
sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from hostile import HTACCEL, REPO, Server, site  # noqa: E402

ONLY = sys.argv[sys.argv.index("--only") + 1] if "--only" in sys.argv else None
TESTSSL = shutil.which("testssl") or shutil.which("testssl.sh") or "/usr/bin/testssl"
SEVERITY = {"LOW": 1, "MEDIUM": 2, "HIGH": 3, "CRITICAL": 4}
# A run takes about 1 minute (certbot's configuration) to 3 (Debian's, whose
# many ciphers Apache offers are tried one by one) on loopback.
SECONDS_PER_RUN = 330

# Findings that differ between the two servers only because they are
# different software; a difference here is never a failure.
IGNORED = {
    "banner_server": "the HTTP Server header names the program (Apache says `Apache`)",
    "banner_application": "X-Powered-By and the like come from the program, not from TLS",
    "HTTP_clock_skew": "the servers' clocks against testssl's, read seconds apart",
    "scanTime": "how long testssl.sh took",
}

# Certbot's options-ssl-apache.conf, as certbot writes it.
CERTBOT_OPTIONS = """\
SSLEngine on
SSLProtocol             all -SSLv2 -SSLv3 -TLSv1 -TLSv1.1
SSLCipherSuite          ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256:\
ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-RSA-AES256-GCM-SHA384:ECDHE-ECDSA-CHACHA20-POLY1305:\
ECDHE-RSA-CHACHA20-POLY1305:DHE-RSA-AES128-GCM-SHA256:DHE-RSA-AES256-GCM-SHA384
SSLHonorCipherOrder     off
SSLSessionTickets       off
SSLOptions +StrictRequire
"""

# (name, what, key type, TLS lines); @CRT@ and @KEY@ name the certificate.
CONFIGURATIONS = [
    ("debian-default-ssl",
     "Debian's default-ssl site with mods-available/ssl.conf's settings, a snakeoil-like "
     "self-signed RSA-2048 certificate",
     "rsa",
     "LoadModule socache_shmcb_module modules/mod_socache_shmcb.so\n"
     "LoadModule ssl_module modules/mod_ssl.so\n"
     "SSLRandomSeed startup builtin\n"
     "SSLRandomSeed connect builtin\n"
     "SSLSessionCache shmcb:@RUNDIR@/ssl_scache(512000)\n"
     "SSLSessionCacheTimeout 300\n"
     "SSLCipherSuite HIGH:!aNULL\n"
     "SSLProtocol all -SSLv3\n"
     "SSLSessionTickets off\n"
     "Listen @LISTEN_TLS@ https\n"
     "<VirtualHost *:@TLS_PORT@>\n"
     "    DocumentRoot \"@DOCROOT@\"\n"
     "    SSLEngine on\n"
     "    SSLCertificateFile @CRT@\n"
     "    SSLCertificateKeyFile @KEY@\n"
     "</VirtualHost>\n"),
    ("certbot",
     "certbot's options-ssl-apache.conf, an ECDSA P-256 certificate",
     "ec",
     "LoadModule ssl_module modules/mod_ssl.so\n"
     "Listen @LISTEN_TLS@ https\n"
     "<VirtualHost *:@TLS_PORT@>\n"
     "    ServerName localhost\n"
     "    DocumentRoot \"@DOCROOT@\"\n"
     + "".join("    " + line + "\n" for line in CERTBOT_OPTIONS.splitlines()) +
     "    SSLCertificateFile @CRT@\n"
     "    SSLCertificateKeyFile @KEY@\n"
     "</VirtualHost>\n"),
]


def certificate(directory, kind):
    """A self-signed certificate for localhost, key readable by the workers."""
    crt, key = os.path.join(directory, kind + ".crt"), os.path.join(directory, kind + ".key")
    newkey = (["-newkey", "rsa:2048"] if kind == "rsa"
              else ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256"])
    subprocess.run(["openssl", "req", "-x509", *newkey, "-nodes", "-keyout", key, "-out", crt,
                    "-days", "365", "-subj", "/CN=localhost",
                    "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1"],
                   check=True, capture_output=True)
    os.chmod(key, 0o644)
    return crt, key


def run_testssl(port, jsonfile, logfile):
    """testssl.sh against 127.0.0.1:port; returns its findings (a list of dicts)."""
    cmd = [TESTSSL, "--quiet", "--color", "0", "--warnings", "off", "--nodns", "none",
           "--connect-timeout", "5", "--openssl-timeout", "5",
           "--jsonfile", jsonfile,
           "-p", "-e", "-f", "-P", "-S", "-h", "-U",
           "127.0.0.1:%d" % port]
    with open(logfile, "wb") as log:
        proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, start_new_session=True)
        try:
            proc.wait(SECONDS_PER_RUN)
        except subprocess.TimeoutExpired:
            # testssl.sh and the openssl processes it started.
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            # Half a run would read as findings Apache lacks, or the reverse.
            raise RuntimeError("testssl.sh did not finish within %d s" % SECONDS_PER_RUN)
    with open(jsonfile) as f:
        return json.load(f)


def is_vulnerable(finding):
    text = finding.get("finding", "")
    return "VULNERABLE" in text and "not vulnerable" not in text.lower()


def counts(findings):
    out = {}
    for f in findings:
        out[f["severity"]] = out.get(f["severity"], 0) + 1
    return out


def htaccel_only(ours, theirs):
    """htaccel's findings of LOW or above (or VULNERABLE) that Apache's run
    does not have as severe under the same id, and htaccel's WARNs (a check
    testssl.sh could not finish) that Apache's run does not have."""
    apache = {}
    for f in theirs:
        apache.setdefault(f["id"], []).append(f)
    only = []
    for f in ours:
        if f["id"] in IGNORED:
            continue
        same = apache.get(f["id"], [])
        if f["severity"] == "WARN":
            shared = any(a["severity"] == "WARN" for a in same)
        else:
            level = SEVERITY.get(f["severity"], 0)
            vulnerable = is_vulnerable(f)
            if level == 0 and not vulnerable:
                continue
            shared = any(SEVERITY.get(a["severity"], 0) >= level
                         and (is_vulnerable(a) or not vulnerable) for a in same)
        if not shared:
            only.append({"id": f["id"], "severity": f["severity"], "finding": f.get("finding", ""),
                         "apache": [{"severity": a["severity"], "finding": a.get("finding", "")}
                                    for a in same]})
    return only


def self_check():
    """The comparison on made-up findings, so that a comparison that can no
    longer fail is caught: returns what it got wrong (empty when right)."""
    apache = [{"id": "LUCKY13", "severity": "LOW", "finding": "potentially vulnerable"},
              {"id": "heartbleed", "severity": "OK", "finding": "not vulnerable"},
              {"id": "BREACH", "severity": "MEDIUM", "finding": "potentially VULNERABLE"},
              {"id": "engine_problem", "severity": "WARN", "finding": "no engine"}]
    ours = [{"id": "LUCKY13", "severity": "LOW", "finding": "potentially vulnerable"},
            {"id": "heartbleed", "severity": "CRITICAL", "finding": "VULNERABLE"},
            {"id": "BREACH", "severity": "LOW", "finding": "potentially VULNERABLE"},
            {"id": "engine_problem", "severity": "WARN", "finding": "no engine"},
            {"id": "banner_server", "severity": "MEDIUM", "finding": "htaccel"},
            {"id": "cipher_order", "severity": "MEDIUM", "finding": "weak order"},
            {"id": "ROBOT", "severity": "INFO", "finding": "VULNERABLE"},
            {"id": "sessionresumption_ticket", "severity": "WARN", "finding": "check failed"},
            {"id": "cipher_x2f", "severity": "INFO", "finding": "AES128-SHA"}]
    want = ["heartbleed", "cipher_order", "ROBOT", "sessionresumption_ticket"]
    got = [f["id"] for f in htaccel_only(ours, apache)]
    return [] if got == want else ["the comparison found %s, not %s" % (got, want)]


def compare(name, kind, tls_lines, work):
    certs = os.path.join(work, "certs")
    os.makedirs(certs, exist_ok=True)
    crt, key = certificate(certs, kind)
    conf = tls_lines.replace("@CRT@", crt).replace("@KEY@", key)
    root = os.path.join(work, "root")
    os.makedirs(root, exist_ok=True)
    site(root)
    servers, findings = {}, {}
    try:
        for server in ("htaccel", "apache"):
            rundir = os.path.join(work, "run-" + server)
            os.makedirs(rundir, exist_ok=True)
            servers[server] = Server(server, root, rundir, extra_conf=conf)

        errors = {}

        def scan(server):
            try:
                findings[server] = run_testssl(
                    servers[server].tls_port, os.path.join(work, server + ".json"),
                    os.path.join(work, server + ".testssl.log"))
            except (OSError, ValueError, RuntimeError) as e:
                errors[server] = "%s: %s" % (server, e)
        threads = [threading.Thread(target=scan, args=(s,)) for s in servers]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        alive = {s: servers[s].alive() for s in servers}
        if errors:
            raise RuntimeError("; ".join(errors.values()))
    finally:
        for server in servers.values():
            server.stop()
    for server in ("htaccel", "apache"):
        if not findings.get(server):
            tail = open(os.path.join(work, server + ".testssl.log"), errors="replace").read()
            raise RuntimeError("testssl.sh reported nothing for %s: %s" % (server, tail[-600:]))
    return findings, alive


def testssl_version():
    try:
        return subprocess.run(["dpkg-query", "-W", "-f", "${Version}", "testssl.sh"],
                              capture_output=True, text=True).stdout.strip() or None
    except OSError:
        return None


def main():
    if not os.path.exists(HTACCEL):
        print("testssl: htaccel binary not found at %s (cargo build -p htaccel)" % HTACCEL)
        return 2
    if not os.path.exists(TESTSSL):
        print("testssl: testssl.sh not found (Debian package testssl.sh)")
        return 2
    out = []
    passed = failed = 0
    wrong = self_check()
    if wrong:
        print("FAIL   testssl/self-check: " + "; ".join(wrong))
        failed += 1
    for name, what, kind, tls_lines in CONFIGURATIONS:
        if ONLY and ONLY not in name:
            continue
        work = tempfile.mkdtemp(prefix="htaccel-testssl.")
        os.chmod(work, 0o755)
        started = time.time()
        error, only, findings, alive = None, [], {}, {}
        try:
            findings, alive = compare(name, kind, tls_lines, work)
            only = htaccel_only(findings["htaccel"], findings["apache"])
        except Exception as e:  # a configuration that cannot be checked is a failure
            error = repr(e)
        failing = [f for f in only if f["severity"] != "WARN"]
        ok = error is None and not failing and alive.get("htaccel", False)
        seconds = round(time.time() - started, 1)
        passed += ok
        failed += not ok
        severities = {s: counts(findings.get(s, [])) for s in ("htaccel", "apache")}
        print("%-6s testssl/%s (%.1fs): htaccel %s; Apache %s%s" % (
            "ok" if ok else "FAIL", name, seconds, json.dumps(severities["htaccel"], sort_keys=True),
            json.dumps(severities["apache"], sort_keys=True), "; error " + error if error else ""))
        for f in only:
            print("  htaccel only%s: %s %s: %s (Apache: %s)" % (
                " (not a failure)" if f["severity"] == "WARN" else "", f["severity"], f["id"], f["finding"],
                "; ".join("%s %s" % (a["severity"], a["finding"]) for a in f["apache"]) or "no such finding"))
        if not alive.get("htaccel", True):
            print("  htaccel exited during the scan")
        out.append({"name": name, "what": what, "ok": bool(ok), "seconds": seconds, "error": error,
                    "severities": severities, "htaccel_only": only,
                    "findings": {s: [{k: f.get(k, "") for k in ("id", "severity", "finding")}
                                     for f in findings.get(s, [])] for s in ("htaccel", "apache")}})
        if ok:
            shutil.rmtree(work, ignore_errors=True)
        else:
            print("  kept for inspection: %s" % work)
    os.makedirs(os.path.join(REPO, "target/security"), exist_ok=True)
    with open(os.path.join(REPO, "target/security/testssl.json"), "w") as f:
        json.dump({"testssl": testssl_version(), "ignored": IGNORED, "configurations": out}, f, indent=1)
    print("testssl: %d passed, %d failed" % (passed, failed))
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
