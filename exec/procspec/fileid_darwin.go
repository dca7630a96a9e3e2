//go:build darwin

package procspec

import "syscall"

// fileIDFromStat converts a stat buffer.
func fileIDFromStat(st *syscall.Stat_t) FileID {
	return FileID{Dev: uint64(st.Dev), Ino: st.Ino, Size: st.Size,
		MtimeNS: st.Mtimespec.Nano(), CtimeNS: st.Ctimespec.Nano()}
}
