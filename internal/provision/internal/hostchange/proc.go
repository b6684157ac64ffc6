package hostchange

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strings"
)

// ProcFields reads a table of /proc (mountinfo, net/route, net/tcp) as the
// whitespace-separated fields of each line, after skip header lines.
func ProcFields(path string, skip int) ([][]string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	var rows [][]string
	sc := bufio.NewScanner(bytes.NewReader(data))
	for n := 0; sc.Scan(); n++ {
		if n >= skip {
			rows = append(rows, strings.Fields(sc.Text()))
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	return rows, nil
}
