# Planted defect: every tcgen05.commit (the MMA's completion signal to its mbarrier) is dropped.
s/^tcgen05\.commit\.[^;]*;[[:space:]]*$/\/\/ planted: tcgen05.commit dropped/
