"""Reads JUnit XML files with junitparser, the library
EnricoMi/publish-unit-test-result-action is built on (here Debian's
python3-junitparser), as that reader walks a file: its suites, their
attributes, each case with its result. Prints the same shape as read.js,
which ci/junitreaders compares with the report.

    /usr/bin/python3 read.py FILE...
"""
import json
import sys

import junitparser
from junitparser import Error, Failure, JUnitXml, Skipped, TestSuite


def read(path):
    xml = JUnitXml.fromfile(path)
    suites = [xml] if isinstance(xml, TestSuite) else list(xml)
    out = {"top": None if isinstance(xml, TestSuite) else dict(xml._elem.attrib), "suites": []}
    for suite in suites:
        # The counts as junitparser reads them (None where absent), then the
        # attributes as written.
        attrs = dict(suite._elem.attrib)
        s = {"attributes": attrs, "parsed": {k: getattr(suite, k) for k in ("tests", "failures", "errors", "skipped")}, "cases": []}
        for case in suite:
            result, message = "passed", ""
            for r in case.result:
                kind = {Failure: "failure", Error: "error", Skipped: "skipped"}.get(type(r))
                if kind:
                    result, message = kind, r.message or ""
                    break
            attributes = dict(case._elem.attrib)
            attributes["name"], attributes["classname"] = case.name, case.classname
            s["cases"].append({"attributes": attributes, "result": result, "message": message,
                               "systemErr": len(case.system_err or "")})
        out["suites"].append(s)
    return out


def main():
    name = "junitparser " + getattr(junitparser, "version", "?")
    print(json.dumps({path: {name: read(path)} for path in sys.argv[1:]}))


if __name__ == "__main__":
    main()
