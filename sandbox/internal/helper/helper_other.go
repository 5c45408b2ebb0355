//go:build !linux

package helper
