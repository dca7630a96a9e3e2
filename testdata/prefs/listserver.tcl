# listserver.tcl: answers list questions from the prefs tests, one per line.
# Every string travels as hex of its UTF-8 bytes, so nothing depends on the
# channel's encoding or on newlines inside elements.
#   P <hex>          -> "OK <hex> <hex> ..." (the elements of the string as a
#                       list, "-" for an empty one) or "ERR <hex of the error>"
#   F [<hex> ...]    -> "S <hex>": the string of [list] of those elements
#                       ("-" stands for an empty element)
fconfigure stdin -translation lf -encoding utf-8
fconfigure stdout -translation lf -encoding utf-8 -buffering line
proc unhex {h} { encoding convertfrom utf-8 [binary decode hex $h] }
proc tohex {s} { binary encode hex [encoding convertto utf-8 $s] }
while {[gets stdin line] >= 0} {
    set words [split $line " "]
    set op [lindex $words 0]
    set args [lrange $words 1 end]
    if {$op eq "P"} {
        set s [unhex [lindex $args 0]]
        if {[catch {llength $s} err]} {
            puts "ERR [tohex $err]"
            continue
        }
        set out {}
        foreach e $s { if {$e eq ""} { lappend out - } else { lappend out [tohex $e] } }
        puts [string trimright "OK [join $out { }]"]
    } elseif {$op eq "F"} {
        set elems {}
        foreach h $args { if {$h eq "-"} { lappend elems "" } else { lappend elems [unhex $h] } }
        puts "S [tohex [list {*}$elems]]"
    } else {
        puts "ERR [tohex {unknown request}]"
    }
}
