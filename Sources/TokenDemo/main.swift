import ObservationTokens
print("demo")
