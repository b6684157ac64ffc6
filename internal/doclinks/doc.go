// Package doclinks holds the repository's Markdown to its links: its test
// finds every relative link in every .md file and fails on one that
// leads nowhere, so that a moved or removed file cannot leave a reader of
// the docs stranded.
package doclinks
