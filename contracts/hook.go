package contracts

import "fmt"

// EncodePlan returns the optParams a client passes to JobEscrow.setBudget to plan a Surety
// job (SuretyHook stores it): abi.encode(plan), the Plan tuple's eight static words. It is
// the same encoding planOf returns, so `cast abi-encode "f((address,uint32,uint32,uint16,uint16,uint128,address,uint256))" "(...)"`
// produces it too.
func EncodePlan(p ISuretyHookPlan) ([]byte, error) {
	parsed, err := SuretyHookMetaData.ParseABI()
	if err != nil {
		return nil, err
	}
	out, err := parsed.Methods["planOf"].Outputs.Pack(p)
	if err != nil {
		return nil, fmt.Errorf("encode plan: %w", err)
	}
	return out, nil
}
