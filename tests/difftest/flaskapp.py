"""A Flask application (WSGI, run by gunicorn) behind the reverse-proxy
cases that name `flask` in their `needs` file, and behind the Flask
benchmark (bench/flask_bench.py).

It serves some routes itself (HTML, JSON, redirects, a POST echo, its own
404, a large streamed body, a file through Flask's send_file) and answers
downloads with an `X-Sendfile: /absolute/path` header and no body, for the
server in front to send the file (mod_xsendfile's protocol).

Files live under `stage/shared/` of the directory the application is
started in (the case's sandbox), or under $FLASK_FILES when set.
"""

import mimetypes
import os

from flask import Flask, Response, abort, jsonify, redirect, request, send_file, url_for

app = Flask(__name__)
FILES = os.environ.get("FLASK_FILES") or os.path.join(os.getcwd(), "stage", "shared")


def _file(name):
    """Absolute path of a file below FILES (no `..`, no separators)."""
    if "/" in name or name.startswith("."):
        abort(404)
    return os.path.join(FILES, name)


@app.route("/")
def home():
    return "<!doctype html>\n<title>Flask</title>\n<h1>Hello from Flask</h1>\n"


@app.route("/api/item/<int:n>")
def item(n):
    return jsonify(id=n, name=f"item {n}", tags=["a", "b"], query=request.args.to_dict())


@app.route("/go")
def go():
    # A relative Location, as Flask sends by default.
    return redirect("/home-relative")


@app.route("/go-absolute")
def go_absolute():
    # An absolute URL naming the application itself: ProxyPassReverse
    # turns it into the front server's URL.
    return redirect(url_for("home", _external=True), code=301)


@app.route("/echo", methods=["GET", "POST", "PUT"])
def echo():
    seen = {
        "method": request.method,
        "path": request.path,
        "query": request.query_string.decode("latin-1"),
        "form": request.form.to_dict(),
        "body": request.get_data(as_text=True) if not request.form else "",
        "host": request.headers.get("Host"),
        "content_type": request.headers.get("Content-Type"),
        "x_forwarded_for": request.headers.get("X-Forwarded-For"),
        "x_forwarded_host": request.headers.get("X-Forwarded-Host"),
        "x_forwarded_server": request.headers.get("X-Forwarded-Server"),
    }
    return jsonify(seen), 201 if request.method == "PUT" else 200


@app.route("/teapot")
def teapot():
    return Response("short and stout\n", status=418, mimetype="text/plain",
                    headers={"X-App": "flask", "Cache-Control": "no-store"})


@app.route("/empty/<int:code>")
def empty(code):
    """A 204 or 304 the application makes itself, with entity headers (a
    proxy passes them on; the server's own 304 would not carry them)."""
    if code not in (204, 304):
        abort(404)
    return Response(b"", status=code, mimetype="text/plain",
                    headers={"Content-Language": "de", "ETag": '"app"'})


@app.route("/stream")
def stream():
    """About 200 KB in 1000 pieces, without a length (chunked)."""
    n = min(int(request.args.get("n", "1000")), 100000)

    def lines():
        for i in range(n):
            yield f"line {i:06d} " + "x" * 188 + "\n"

    return Response(lines(), mimetype="text/plain")


@app.route("/send/<name>")
def send(name):
    """Flask sends the file itself (with its own ETag and conditionals)."""
    return send_file(_file(name), conditional=True)


@app.route("/bytes/<name>")
def send_bytes(name):
    """Flask reads the file and answers its bytes (no conditionals)."""
    with open(_file(name), "rb") as f:
        body = f.read()
    return Response(body, mimetype=mimetypes.guess_type(name)[0] or "application/octet-stream")


@app.route("/xs/<name>", methods=["GET", "HEAD", "POST"])
def xsendfile(name):
    """The server in front sends the file: X-Sendfile and no body. The
    Content-Type is the one the server would give the file itself."""
    resp = Response(b"", mimetype=mimetypes.guess_type(name)[0] or "application/octet-stream")
    resp.headers["X-Sendfile"] = _file(name)
    if "disposition" in request.args:
        resp.headers["Content-Disposition"] = f'attachment; filename="{name}"'
    return resp


@app.route("/xs-outside")
def xsendfile_outside():
    """A file outside XSendFilePath: the server must refuse it."""
    resp = Response(b"", mimetype="text/plain")
    resp.headers["X-Sendfile"] = "/etc/hostname"
    return resp


@app.route("/xs-missing")
def xsendfile_missing():
    resp = Response(b"", mimetype="text/plain")
    resp.headers["X-Sendfile"] = os.path.join(FILES, "no-such-file.bin")
    return resp


@app.errorhandler(404)
def not_found(e):
    return Response("the application has no such page\n", status=404, mimetype="text/plain")
