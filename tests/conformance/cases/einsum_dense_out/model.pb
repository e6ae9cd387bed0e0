
;
x0Placeholder*
dtype0*
shape:
7
x1Placeholder*
dtype0*
shape:
B
zEinsumx0x1*
N*
T0*
equationbtnh,nhd->btd"ª