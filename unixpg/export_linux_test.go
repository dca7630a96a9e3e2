package unixpg

// WaitCgroupRemovals waits until the run cgroups removed in the background
// (runCgroup.release) are gone.
func WaitCgroupRemovals() { cgroupRemovals.Wait() }
