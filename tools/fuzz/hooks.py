"""Schemathesis hooks for tools/fuzz/fuzz.ts (loaded through SCHEMATHESIS_HOOKS)."""

import itertools
import json
import os

import schemathesis

# The server runs with TRUST_PROXY=loopback for the fuzz run, so each request names its own client address:
# the fuzzer is one client sending thousands of requests, and the per-IP rate limits (600 a minute, 10 logins
# a minute) would otherwise turn most of the run into 429 answers instead of exercising the operations.
_addresses = itertools.count(1)

# The fuzzer's own credentials: the admin it signs in as, its API key and that key's app (concrete paths such
# as "/users/<admin id>"). Left to it, the fuzzer deletes or demotes that admin (or revokes the key) early in
# the run, and every later request is a 401 that tests nothing. Writes to these resources are skipped; the
# same operations are still fuzzed on every other user, key and app. The list also names the routes that act
# on the caller's own session (sign-out, enabling two-factor sign-in): they have no id to aim elsewhere, so a
# stateful step that reaches one is sent without the fuzzer's token (a 401 that changes nothing).
_PROTECTED = tuple(json.loads(os.environ.get("FUZZ_PROTECTED_PATHS", "[]")))

# Every route with an {appId} answers 404 for an app that does not exist, and a generated id almost never
# exists: every other case is aimed at the seeded app (whose API key the fuzzer sends), so the operations
# behind that check are exercised too.
_APP_ID = os.environ.get("FUZZ_APP_ID")
_app_cases = itertools.count()
_READ_METHODS = {"GET", "HEAD", "OPTIONS"}


def _targets_own_credentials(case):
    if case.method.upper() in _READ_METHODS:
        return False
    try:
        path = case.formatted_path
    except Exception:
        return False
    return any(path == protected or path.startswith(protected + "/") for protected in _PROTECTED)


@schemathesis.hook
def filter_case(context, case):
    return not _targets_own_credentials(case)


@schemathesis.hook
def before_call(context, case, kwargs):
    # filter_case does not reach every phase (stateful steps follow links to ids taken from responses): aim
    # such a step at an id that does not exist instead, which answers 404 and changes nothing.
    if _targets_own_credentials(case):
        if not case.path_parameters:
            if case.headers is None:
                case.headers = {}
            case.headers["Authorization"] = "Bearer not-the-fuzz-admin"
        for name, value in (case.path_parameters or {}).items():
            if any(str(value) in protected.split("/") for protected in _PROTECTED):
                case.path_parameters[name] = "000000000000000000000000"
    if _APP_ID and "appId" in (case.path_parameters or {}) and next(_app_cases) % 2 == 0:
        case.path_parameters["appId"] = _APP_ID
    n = next(_addresses) % (1 << 24)
    if case.headers is None:
        case.headers = {}
    case.headers["X-Forwarded-For"] = f"10.{n >> 16}.{(n >> 8) & 255}.{n & 255}"
