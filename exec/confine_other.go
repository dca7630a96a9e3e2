//go:build !linux

package exec

// confineCaps is empty off Linux: there is no write confinement to probe.
type confineCaps struct{}

// probeConfinement learns nothing off Linux.
func probeConfinement(ConfineConfig) *confineCaps { return &confineCaps{} }

// confine leaves the run's writes unconfined off Linux and says so, unless
// require_confinement (or network none, which nothing here can apply)
// refuses it.
func (e *Executor) confine(cmd Command, meta Meta, preview bool) (*confinePlan, *Refusal) {
	cc := e.cfg.Confine
	if cc.Off {
		return unconfinedPlan("write confinement is off for this host", ""), nil
	}
	s := cc.settings()
	if s.Require || s.Network == NetworkNone {
		return nil, confinementUnavailable(confineOS)
	}
	return unconfinedCheckedPlan(cmd.ProjectRoot, confineOS, s.Network), nil
}
