// Package workflows tests the repository's own automation, which cannot
// run here: the GitHub Actions workflows in .github/workflows are linted
// with actionlint (and shellcheck for their run scripts), and the dev
// container in .devcontainer is validated against the spec's schema and
// read by the devcontainer CLI. It has no code of its own.
package workflows
