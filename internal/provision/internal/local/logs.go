package local

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// ExportLogs copies every component log and the audit log into dir.
func (p *Provider) ExportLogs(_ context.Context, dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create %s: %w", dir, err)
	}
	files, _ := filepath.Glob(filepath.Join(p.l.logDir(), "*.log"))
	files = append(files, p.l.auditLog())
	for _, src := range files {
		if err := copyFile(src, filepath.Join(dir, filepath.Base(src))); err != nil && !os.IsNotExist(err) {
			return err
		}
	}
	return nil
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(dst)
	if err != nil {
		return fmt.Errorf("copy %s: %w", src, err)
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return fmt.Errorf("copy %s: %w", src, err)
	}
	return out.Close()
}
