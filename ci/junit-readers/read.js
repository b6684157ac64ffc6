// Reads JUnit XML files with the two parsers the JavaScript CI readers are
// built on, each as those readers call it: xml-js in compact mode
// (mikepenz/action-junit-report) and xml2js with its defaults
// (dorny/test-reporter). Prints, per file and parser, what the parser made
// of it in one shape: the testsuites' and each testsuite's attributes, and
// each testcase with its result (passed, failure, error or skipped), its
// message and attributes. ci/junitreaders compares that with the report.
//
//   node read.js FILE...    (NODE_PATH: the node_modules of package.json)
'use strict';
const fs = require('fs');
const xmljs = require('xml-js');
const xml2js = require('xml2js');

// A child element: xml-js (compact) gives one object or an array of them.
const list = (v) => (v === undefined ? [] : Array.isArray(v) ? v : [v]);

function viaXmlJs(text) {
  const doc = xmljs.xml2js(text, { compact: true });
  const attrs = (el) => (el && el._attributes) || {};
  const body = (el) => (el ? String(el._text || el._cdata || '') : '');
  // The root is testsuites, or a single testsuite.
  const roots = doc.testsuites ? list(doc.testsuites.testsuite) : list(doc.testsuite);
  const out = { top: doc.testsuites ? attrs(doc.testsuites) : null, suites: [] };
  for (const s of roots) {
    const suite = { attributes: attrs(s), cases: [] };
    for (const c of list(s.testcase)) {
      const tc = { attributes: attrs(c), result: 'passed', message: '', systemErr: body(list(c['system-err'])[0]).length };
      for (const kind of ['failure', 'error', 'skipped']) {
        const el = list(c[kind])[0];
        if (el !== undefined && tc.result === 'passed') {
          tc.result = kind;
          tc.message = attrs(el).message || '';
        }
      }
      suite.cases.push(tc);
    }
    out.suites.push(suite);
  }
  return out;
}

async function viaXml2js(text) {
  const doc = await xml2js.parseStringPromise(text);
  // Defaults: every child is an array; attributes under $; an element with
  // neither attributes nor children is its text ('' when empty).
  const attrs = (el) => (el && typeof el === 'object' && el.$) || {};
  const body = (el) => (el === undefined ? '' : typeof el === 'string' ? el : String(el._ || ''));
  const roots = doc.testsuites ? doc.testsuites.testsuite || [] : [doc.testsuite];
  const out = { top: doc.testsuites ? attrs(doc.testsuites) : null, suites: [] };
  for (const s of roots) {
    const suite = { attributes: attrs(s), cases: [] };
    for (const c of s.testcase || []) {
      const tc = { attributes: attrs(c), result: 'passed', message: '', systemErr: body((c['system-err'] || [])[0]).length };
      for (const kind of ['failure', 'error', 'skipped']) {
        if (c[kind] !== undefined && tc.result === 'passed') {
          tc.result = kind;
          tc.message = attrs(c[kind][0]).message || '';
        }
      }
      suite.cases.push(tc);
    }
    out.suites.push(suite);
  }
  return out;
}

async function main() {
  const out = {};
  for (const file of process.argv.slice(2)) {
    const text = fs.readFileSync(file, 'utf8');
    out[file] = {
      ['xml-js ' + require('xml-js/package.json').version]: viaXmlJs(text),
      ['xml2js ' + require('xml2js/package.json').version]: await viaXml2js(text),
    };
  }
  process.stdout.write(JSON.stringify(out));
}

main().catch((err) => {
  console.error(`read.js: ${err.stack || err}`);
  process.exit(1);
});
