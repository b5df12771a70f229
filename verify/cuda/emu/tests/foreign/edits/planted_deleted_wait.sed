# Planted defect: every mbarrier wait succeeds at once (try_wait becomes "true").
s/mbarrier\.try_wait\.parity\.shared::cta\.b64 ([[:alnum:]_%]+), \[[^]]*\], [^;]*;/setp.eq.u32 \1, 0, 0;/
