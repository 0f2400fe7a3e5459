#!/usr/bin/env python3
"""The boundary between the engine's core and its modules, kept in CI.

A module is plugged in at one place (`crates/engine/src/modules/mod.rs`:
its `mod` line, its `Module` in `ALL`, its slots in `dir_slots!` and
`server_slots!`, its functions in `modules/hooks.rs`), so code outside
`modules/` should not name a module. Some of it still does; those
(file, module) pairs are listed in `scripts/module_boundary.allow`. This
check fails when a new pair appears (name the module through the hooks or
the slot lists instead) and when a listed pair is gone (take it off the
list, so that the list only shrinks). The core module and `hooks` are the
core's own and are not counted.
"""

import os
import re
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
MODULES = os.path.join("crates", "engine", "src", "modules")
ALLOW = os.path.join("scripts", "module_boundary.allow")
NOT_COUNTED = {"mod", "hooks", "core"}
# Slot fields (modules/mod.rs's slot lists) named otherwise than their module.
SLOT_MODULE = {"authz": "authz_core", "auth_prev": "authn_core", "protocols": "http2",
               "proxy_protocol": "remoteip"}


def module_names():
    names = {n[:-3] if n.endswith(".rs") else n for n in os.listdir(os.path.join(ROOT, MODULES))}
    return names - NOT_COUNTED


def pairs(names):
    """Every (file, module) where a file outside modules/ names a module."""
    found = set()
    for top in ("crates", "tests", "fuzz"):
        for dirpath, _, files in os.walk(os.path.join(ROOT, top)):
            rel = os.path.relpath(dirpath, ROOT)
            if rel.startswith(MODULES) or "/target" in rel or rel.startswith("target"):
                continue
            for f in files:
                if not f.endswith(".rs"):
                    continue
                path = os.path.join(rel, f)
                text = open(os.path.join(ROOT, path), encoding="utf-8").read()
                for m in re.finditer(r"modules::([a-z_0-9]+)", text):
                    if m.group(1) in names:
                        found.add((path, m.group(1)))
                for m in re.finditer(r"(?:\.modules|\bconf|\.base)\.([a-z_0-9]+)", text):
                    module = SLOT_MODULE.get(m.group(1), m.group(1))
                    if module in names:
                        found.add((path, module))
                for m in re.finditer(r"modules::\{([^}]*)\}", text):
                    for name in re.findall(r"\b([a-z_0-9]+)\b", m.group(1)):
                        if name in names:
                            found.add((path, name))
    return found


def allowed():
    out = set()
    for line in open(os.path.join(ROOT, ALLOW), encoding="utf-8"):
        line = line.split("#", 1)[0].strip()
        if line:
            path, module = line.split()
            out.add((path, module))
    return out


def main():
    found, allow = pairs(module_names()), allowed()
    new, gone = sorted(found - allow), sorted(allow - found)
    for path, module in new:
        print(f"{path} names modules::{module}: reach it through modules/hooks.rs or the slot lists in modules/mod.rs")
    for path, module in gone:
        print(f"{path} no longer names modules::{module}: remove the line from {ALLOW}")
    print(f"module boundary: {len(found)} (file, module) pairs outside modules/ ({len(new)} new, {len(gone)} gone)")
    return 1 if new or gone else 0


if __name__ == "__main__":
    sys.exit(main())
