
.
xPlaceholder*
dtype0*
shape:

relu6Relu6x*
T0

eluElux*
T0
.
leaky	LeakyRelux*
T0*
alpha%ÍÌL>
0
leaky01	LeakyRelux*
T0*
alpha%
×#<
 
softplusSoftplusx*
T0"ª