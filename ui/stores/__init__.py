"""What every process of the server shares, on disk or in Redis (pure, no Streamlit): classroom rooms (`rooms`) and
trained or uploaded weights (`weights`)."""
