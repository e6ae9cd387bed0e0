

ConstConst*
dtype0
H
uRandomUniformConst*

seed*
dtype0*
T0*
seed2"ª