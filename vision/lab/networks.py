"""The networks a lab command may be told to read with instead of the shipped ones.

Its own module, free of OpenCV: `vision.lab.benchmark` names them to parse the command line,
`vision.lab.net_training` to cut its samples, and neither may import the other.
"""

#: The options naming a network file, and the network each names.
NETWORKS = {"face": "face network", "finder": "die finder", "lean": "lean check"}
