// Command tiny is built and tested inside the sandbox by toolbash's tests.
package main

import "fmt"

func main() { fmt.Println(add(2, 3)) } // stdout-ok: a test program the sandbox builds and runs

func add(a, b int) int { return a + b }
