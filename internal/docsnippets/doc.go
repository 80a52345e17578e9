// Package docsnippets holds no code: its test checks that the Go code
// blocks of README.md and docs/*.md still compile against the current API,
// so a reader who copies one gets a program that builds.
package docsnippets
