// Command yaml2json reads one YAML document (a file argument or stdin) and prints it as JSON.
// The rack's fixture is YAML; rack.mjs has no npm dependencies, so it converts with this.
package main

import (
	"fmt"
	"io"
	"os"

	"sigs.k8s.io/yaml"
)

func main() {
	var in []byte
	var err error
	if len(os.Args) > 1 && os.Args[1] != "-" {
		in, err = os.ReadFile(os.Args[1])
	} else {
		in, err = io.ReadAll(os.Stdin)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "yaml2json:", err)
		os.Exit(1)
	}
	out, err := yaml.YAMLToJSON(in)
	if err != nil {
		fmt.Fprintln(os.Stderr, "yaml2json:", err)
		os.Exit(1)
	}
	os.Stdout.Write(append(out, '\n'))
}
