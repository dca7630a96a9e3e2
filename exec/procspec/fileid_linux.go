//go:build linux

package procspec

import "syscall"

// fileIDFromStat converts a stat buffer.
func fileIDFromStat(st *syscall.Stat_t) FileID {
	return FileID{Dev: uint64(st.Dev), Ino: uint64(st.Ino), Size: st.Size,
		MtimeNS: st.Mtim.Nano(), CtimeNS: st.Ctim.Nano()}
}
