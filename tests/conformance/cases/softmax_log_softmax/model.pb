
2
xPlaceholder*
dtype0*
shape
:

pSoftmaxx*
T0

logp
LogSoftmaxx*
T0"ª