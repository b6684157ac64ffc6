package kind

import (
	"fmt"
	"strings"

	"sigs.k8s.io/kind/pkg/log"

	"github.com/kubeproof/kubeproof/internal/progress"
)

// logger passes kind's user-facing messages (V(0), warnings, errors) to
// kubeproof's progress output and drops its debug levels.
type logger struct{ pr *progress.Printer }

func newLogger(pr *progress.Printer) log.Logger { return logger{pr: pr} }

func (l logger) Warn(m string)                    { l.pr.Infof("kind: warning: %s", m) }
func (l logger) Warnf(f string, a ...any)         { l.Warn(fmt.Sprintf(f, a...)) }
func (l logger) Error(m string)                   { l.pr.Infof("kind: error: %s", m) }
func (l logger) Errorf(f string, a ...any)        { l.Error(fmt.Sprintf(f, a...)) }
func (l logger) V(level log.Level) log.InfoLogger { return infoLogger{pr: l.pr, on: level <= 0} }

type infoLogger struct {
	pr *progress.Printer
	on bool
}

// Info prints kind's status lines without their own bullets and padding.
func (i infoLogger) Info(m string) {
	m = strings.TrimSpace(strings.TrimLeft(strings.TrimSpace(m), "•✓✗ "))
	if i.on && m != "" {
		i.pr.Infof("kind: %s", m)
	}
}
func (i infoLogger) Infof(f string, a ...any) { i.Info(fmt.Sprintf(f, a...)) }
func (i infoLogger) Enabled() bool            { return i.on }
